// SAS console. Plain JavaScript, no build step, no dependencies. Every value from the server is
// put into the page as text (textContent), never as HTML.
'use strict';
(function () {
  const TOKEN_KEY = 'sas.console.token';
  const REFRESH_MS = 5000;
  const ACTIVE = ['PENDING', 'WAITING', 'PARKED', 'PROCESSING', 'AWAITING_COMPLETION', 'COMPENSATING'];
  const NEEDS_OPERATOR = ['ERROR', 'COMPENSATION_FAILED'];
  const HELD = ['WAITING', 'PARKED'];
  const FILTERS = ['status', 'workflow', 'after', 'before', 'error'];
  const SHORT = {
    PENDING: 'Pending', WAITING: 'Waiting', PARKED: 'Parked', PROCESSING: 'Processing',
    AWAITING_COMPLETION: 'Awaiting completion', PROCESSED: 'Processed', ERROR: 'Error',
    COMPENSATING: 'Compensating', COMPENSATED: 'Compensated', COMPENSATION_FAILED: 'Comp. failed', CANCELLED: 'Cancelled'
  };
  let info = { title: 'SAS', actions: false, payloads: false, tokenHeader: 'X-SAS-Console-Token', statuses: [], operator: 'console' };
  let refreshTimer = null;
  let refresher = null; // what the current view runs every REFRESH_MS while the tab is visible
  let flashTimer = null;
  const reasons = {}; // the reason typed per task, kept while an active task's page refreshes
  let generation = 0; // bumped on every navigation: a refresh of a view left behind does nothing

  // ---------------------------------------------------------------- helpers

  function el(tag, props, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(props || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') e.className = v;
      else if (k === 'text') e.textContent = v;
      else if (k === 'data') Object.entries(v).forEach(([dk, dv]) => { e.dataset[dk] = dv; });
      else if (k.startsWith('on')) e.addEventListener(k.substring(2), v);
      else e.setAttribute(k, v === true ? '' : v);
    }
    for (const c of children.flat()) {
      if (c === null || c === undefined || c === false) continue;
      e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return e;
  }

  function time(iso) {
    if (!iso) return el('span', { class: 'muted', text: '—' });
    return el('span', { title: iso, class: 'mono', text: iso.replace('T', ' ').replace(/(\.\d{3})\d*Z$/, '$1Z') });
  }

  function pill(status, extra) {
    return el('span', { class: 'pill ' + (extra ? extra + ' ' : '') + status, text: status });
  }

  function token() {
    return sessionStorage.getItem(TOKEN_KEY);
  }

  function flash(kind, text) {
    const f = document.getElementById('flash');
    f.className = 'flash ' + kind;
    f.textContent = text;
    f.hidden = false;
    clearTimeout(flashTimer);
    if (kind === 'ok') flashTimer = setTimeout(() => { f.hidden = true; }, 8000);
  }

  async function api(path, method) {
    const headers = { Accept: 'application/json' };
    if (method === 'POST' && token()) headers[info.tokenHeader] = token();
    const res = await fetch('api/' + path, { method: method || 'GET', headers, credentials: 'same-origin', cache: 'no-store' });
    let body = null;
    try { body = await res.json(); } catch (e) { body = { error: res.status + ' ' + res.statusText }; }
    return { ok: res.ok, status: res.status, body };
  }

  function query(params) {
    const q = new URLSearchParams();
    Object.entries(params).forEach(([k, v]) => { if (v !== undefined && v !== null && v !== '') q.set(k, v); });
    const s = q.toString();
    return s ? '?' + s : '';
  }

  function route() {
    const hash = location.hash.replace(/^#/, '') || '/';
    const [path, qs] = hash.split('?');
    return { path, params: Object.fromEntries(new URLSearchParams(qs || '')) };
  }

  function go(path, params) {
    location.hash = '#' + path + query(params || {});
  }

  /** The page's filters as the API's parameters. */
  function apiFilters(params) {
    return { status: params.status, workflow: params.workflow, createdAfter: params.after, createdBefore: params.before, error: params.error };
  }

  function hasFilter(params) {
    return FILTERS.some((k) => params[k]);
  }

  // ---------------------------------------------------------------- refreshing

  /** Runs {@code fn} every REFRESH_MS while the tab is visible; a hidden tab asks nothing. */
  function autoRefresh(fn) {
    refresher = fn;
    schedule();
  }

  function schedule() {
    clearTimeout(refreshTimer);
    if (!refresher) return;
    const state = document.getElementById('refresh-state');
    if (document.hidden) {
      if (state) state.textContent = 'Auto-refresh paused while the tab is hidden';
      return; // visibilitychange starts it again
    }
    refreshTimer = setTimeout(async () => {
      const mine = generation;
      try {
        await refresher();
        const s = document.getElementById('refresh-state');
        if (s && mine === generation) s.textContent = 'Refreshes every ' + (REFRESH_MS / 1000) + ' s · updated ' + new Date().toISOString().substring(11, 19) + ' UTC';
      } catch (e) {
        const s = document.getElementById('refresh-state');
        if (s) s.textContent = 'Refresh failed: ' + e.message + ' (trying again)';
      }
      if (mine === generation) schedule();
    }, REFRESH_MS);
  }

  function refreshState() {
    return el('span', { id: 'refresh-state', class: 'muted refresh', text: 'Refreshes every ' + (REFRESH_MS / 1000) + ' s' });
  }

  // ---------------------------------------------------------------- operator token

  function renderAuth() {
    const box = document.getElementById('auth');
    box.replaceChildren();
    if (!info.actions) {
      box.append(el('span', { class: 'badge', id: 'read-only', title: 'No action token is configured: nobody can act here.',
        text: 'read-only' }));
      return;
    }
    if (token()) {
      box.append(el('span', { class: 'badge', id: 'operator', title: 'Actions are recorded as done by ' + info.operator,
        text: 'operator token set · ' + info.operator }),
      el('button', { id: 'token-forget', type: 'button', onclick: () => { sessionStorage.removeItem(TOKEN_KEY); renderAuth(); },
        text: 'Forget' }));
      return;
    }
    const input = el('input', { id: 'token', type: 'password', placeholder: 'Operator token', 'aria-label': 'Operator token',
      autocomplete: 'off' });
    const save = () => {
      if (input.value.trim()) {
        sessionStorage.setItem(TOKEN_KEY, input.value.trim());
        renderAuth();
      }
    };
    input.addEventListener('keydown', (e) => { if (e.key === 'Enter') save(); });
    box.append(input, el('button', { id: 'token-save', type: 'button', onclick: save, text: 'Use token' }));
  }

  function refused(r) {
    if (r.status === 403 && token() && /token is wrong/.test(r.body.error || '')) {
      sessionStorage.removeItem(TOKEN_KEY);
      renderAuth();
    }
    flash('error', 'Refused: ' + (r.body.error || r.status));
  }

  async function act(path, reason, done) {
    const more = query({ reason });
    const r = await api(path + (more && path.includes('?') ? '&' + more.substring(1) : more), 'POST');
    if (r.ok) { flash('ok', r.body.message || 'done'); Object.keys(reasons).forEach((k) => delete reasons[k]); }
    else refused(r);
    if (done) await done();
  }

  // ---------------------------------------------------------------- overview and lists

  function cards(o, params) {
    return el('div', { class: 'cards', id: 'counts' },
      el('a', { class: 'card' + (!params.status && !params.q ? ' selected' : ''), href: '#/' + query({ workflow: params.workflow }),
        data: { status: 'ALL' } }, el('div', { class: 'label', text: 'All tasks' }), el('div', { class: 'n', text: o.total })),
      info.statuses.map((s) => el('a', {
        class: 'card' + (o.counts[s] ? '' : ' zero') + (params.status === s ? ' selected' : ''),
        href: '#/' + query({ status: s, workflow: params.workflow }), data: { status: s }
      }, el('div', { class: 'label', text: SHORT[s] || s }), el('div', { class: 'n', text: o.counts[s] || 0 }))));
  }

  function workflowTable(o) {
    const statuses = info.statuses;
    const head = el('tr', {}, el('th', { text: 'Workflow' }), statuses.map((s) => el('th', { class: 'num', text: SHORT[s] || s })),
      el('th', { class: 'num', text: 'Total' }), info.actions ? el('th', { text: '' }) : null);
    const rows = o.workflows.map((w) => el('tr', { data: { workflow: w.name } },
      el('td', {}, el('a', { href: '#/' + query({ workflow: w.name }), text: w.name })),
      statuses.map((s) => el('td', { class: 'num' }, el('a', {
        class: w.counts[s] ? '' : 'zero', href: '#/' + query({ status: s, workflow: w.name }), text: w.counts[s] || 0
      }))),
      el('td', { class: 'num', text: w.total }),
      info.actions ? el('td', {}, w.counts.ERROR ? el('a', {
        class: 'button danger bulk-resubmit', data: { workflow: w.name }, href: '#/' + query({ status: 'ERROR', workflow: w.name, bulk: 'resubmit' }),
        title: 'Preview a resubmit of every ERROR task of ' + w.name, text: 'Resubmit ' + w.counts.ERROR + ' in error…'
      }) : null) : null));
    return el('div', { class: 'panel', id: 'workflows-panel' }, el('table', { id: 'workflows' }, el('thead', {}, head),
      el('tbody', {}, rows.length ? rows : el('tr', {}, el('td', { class: 'empty', colspan: statuses.length + 3, text: 'No tasks yet.' })))));
  }

  function filterForm(params, workflows) {
    const utc = (v) => (v ? v.replace(/Z$/, '').substring(0, 19) : '');
    const f = el('form', { id: 'filters', class: 'filters', autocomplete: 'off' },
      el('label', {}, 'State', el('select', { id: 'f-status' }, el('option', { value: '', text: 'any' }),
        info.statuses.map((s) => el('option', { value: s, selected: params.status === s, text: s })))),
      el('label', {}, 'Workflow', el('input', { id: 'f-workflow', list: 'f-workflows', value: params.workflow || '', placeholder: 'any' }),
        el('datalist', { id: 'f-workflows' }, workflows.map((w) => el('option', { value: w })))),
      el('label', {}, 'Created from (UTC)', el('input', { id: 'f-after', type: 'datetime-local', step: 1, value: utc(params.after) })),
      el('label', {}, 'Created before (UTC)', el('input', { id: 'f-before', type: 'datetime-local', step: 1, value: utc(params.before) })),
      el('label', { class: 'wide' }, 'Error contains', el('input', { id: 'f-error', type: 'search', value: params.error || '', placeholder: 'text in the last error' })),
      el('div', { class: 'filter-buttons' }, el('button', { id: 'f-apply', type: 'submit', class: 'primary', text: 'Search' }),
        el('button', { id: 'f-clear', type: 'button', onclick: () => go('/', {}), text: 'Clear' })));
    f.addEventListener('submit', (e) => {
      e.preventDefault();
      const iso = (v) => (v ? (v.length === 16 ? v + ':00' : v) + 'Z' : '');
      go('/', { status: f.querySelector('#f-status').value, workflow: f.querySelector('#f-workflow').value.trim(),
        after: iso(f.querySelector('#f-after').value), before: iso(f.querySelector('#f-before').value), error: f.querySelector('#f-error').value.trim() });
    });
    return f;
  }

  function bulkPanel(params) {
    if (!info.actions) return null;
    const filters = apiFilters(params);
    const reason = el('input', { id: 'bulk-reason', type: 'text', maxlength: 500, placeholder: 'Reason (recorded in each timeline)', 'aria-label': 'Reason' });
    const result = el('div', { id: 'bulk-preview' });
    const preview = async (action) => {
      const r = await api('bulk' + query(Object.assign({ action }, filters)));
      if (!r.ok) { refused(r); return; }
      const p = r.body;
      const verb = action === 'cancel' ? 'Cancel' : 'Resubmit';
      result.replaceChildren(el('div', { class: 'preview ' + action },
        el('p', {}, el('strong', { id: 'bulk-count', text: p.tooMany ? 'more than ' + p.max : String(p.matching) }), ' ',
          (p.matching === 1 ? 'task matches ' : 'tasks match ') + p.filter + (p.tooMany ? ': narrow the filters (at most ' + p.max + ' at once).' : '.')),
        p.sample.length ? el('ul', { class: 'sample' }, p.sample.map((t) => el('li', {}, el('a', { href: '#/task/' + encodeURIComponent(t.id), text: t.businessKey }), ' ', pill(t.status), ' ', el('span', { class: 'muted', text: t.workflow }))),
          p.matching > p.sample.length ? el('li', { class: 'muted', text: '… and ' + (p.matching - p.sample.length) + ' more' }) : null) : null,
        p.confirm ? el('div', { class: 'actions' },
          el('button', { id: 'bulk-confirm', class: action === 'cancel' ? 'danger' : 'primary', type: 'button', data: { count: p.count },
            onclick: async () => {
              result.replaceChildren();
              await act('bulk/' + action + query(Object.assign({ count: p.count, confirm: p.confirm }, filters)), reason.value.trim(), render);
            }, text: verb + ' these ' + p.count + ' task' + (p.count === 1 ? '' : 's') }),
          el('button', { id: 'bulk-discard', type: 'button', onclick: () => result.replaceChildren(), text: 'Discard' }),
          token() ? null : el('span', { class: 'muted', text: 'Needs the operator token (top right).' })) : null));
    };
    const any = hasFilter(params);
    const panel = el('div', { class: 'panel bulk', id: 'bulk' },
      el('div', { class: 'bulk-row' }, el('span', { class: 'label', text: 'Every matching task' }), reason,
        el('button', { id: 'bulk-preview-resubmit', type: 'button', disabled: !any, onclick: () => preview('resubmit'), text: 'Resubmit…' }),
        el('button', { id: 'bulk-preview-cancel', class: 'danger', type: 'button', disabled: !any, onclick: () => preview('cancel'), text: 'Cancel…' }),
        any ? null : el('span', { class: 'muted', text: 'Set a filter first.' })),
      result);
    if (any && (params.bulk === 'resubmit' || params.bulk === 'cancel')) preview(params.bulk);
    return panel;
  }

  async function overview(params) {
    const r = await api('overview');
    if (!r.ok) throw new Error(r.body.error || r.status);
    const o = r.body;
    const view = document.getElementById('view');
    const list = el('div', { id: 'list' });
    view.replaceChildren(el('div', { class: 'title-row' }, el('h1', { text: 'Tasks' }), refreshState()), cards(o, params),
      el('h2', { text: 'By workflow' }), workflowTable(o),
      params.q ? null : el('h2', { text: 'Search' }), params.q ? null : filterForm(params, o.workflows.map((w) => w.name)),
      params.q ? null : bulkPanel(params), list);
    let pages = await taskList(list, params);
    let shown = JSON.stringify(o);
    const mine = generation;
    // only what changed is drawn again: an unchanged page keeps its elements (and what is focused)
    autoRefresh(async () => {
      const again = await api('overview');
      if (!again.ok || mine !== generation) return;
      if (JSON.stringify(again.body) !== shown) {
        shown = JSON.stringify(again.body);
        document.getElementById('counts').replaceWith(cards(again.body, params));
        document.getElementById('workflows-panel').replaceWith(workflowTable(again.body));
      }
      if (pages() === 1) { // the user has not loaded more: the first page again
        const fresh = el('div', { id: 'list' });
        const freshPages = await taskList(fresh, params);
        const current = document.getElementById('list');
        if (mine === generation && current && current.dataset.sig !== fresh.dataset.sig) {
          current.replaceWith(fresh);
          pages = freshPages;
        }
      }
    });
  }

  function errorCell(t) {
    if (!t.lastError) return el('td', { class: 'err', text: '' });
    if (NEEDS_OPERATOR.includes(t.status)) return el('td', { class: 'err', title: t.lastError, text: t.lastError });
    if (HELD.includes(t.status)) return el('td', { class: 'err held', title: 'Why it waits: ' + t.lastError, text: t.lastError });
    return el('td', { class: 'err past', title: 'A past error, recovered from: ' + t.lastError, text: t.lastError });
  }

  /** Renders the task list into {@code box}; returns a function telling how many pages are shown. */
  async function taskList(box, params) {
    let pages = 0;
    const chips = [];
    const clear = (key) => { const p = Object.assign({}, params); delete p[key]; go('/', p); };
    const chip = (key, text) => chips.push(el('span', { class: 'chip' }, text, el('button', { type: 'button', title: 'clear', onclick: () => clear(key), text: '×' })));
    if (params.q) chip('q', 'key or id “' + params.q + '”');
    if (params.status) chip('status', params.status);
    if (params.workflow) chip('workflow', 'workflow ' + params.workflow);
    if (params.after) chip('after', 'from ' + params.after);
    if (params.before) chip('before', 'before ' + params.before);
    if (params.error) chip('error', 'error “' + params.error + '”');
    const tbody = el('tbody', { id: 'task-rows' });
    const more = el('div', { class: 'more' });
    box.replaceChildren(el('div', { class: 'toolbar' }, el('h2', { text: params.q ? 'Found' : 'Tasks, oldest first' }), chips),
      el('div', { class: 'panel' }, el('table', { id: 'tasks' }, el('thead', {}, el('tr', {},
        el('th', { text: 'Business key' }), el('th', { text: 'Workflow' }), el('th', { text: 'State' }),
        el('th', { class: 'num', text: 'Step' }), el('th', { class: 'num', text: 'Time-outs' }), el('th', { text: 'Created (UTC)' }),
        el('th', { text: 'Last error' }))), tbody), more));

    const load = async (after) => {
      const r = params.q
        ? await api('search' + query({ q: params.q, workflow: params.workflow }))
        : await api('query' + query(Object.assign(apiFilters(params), { afterCreatedAt: after && after.afterCreatedAt, afterId: after && after.afterId })));
      if (!r.ok) throw new Error(r.body.error || r.status);
      if (!pages) box.dataset.sig = JSON.stringify(r.body);
      pages++;
      for (const t of r.body.tasks) {
        tbody.append(el('tr', { class: 'task-row', data: { id: t.id, status: t.status }, onclick: () => go('/task/' + encodeURIComponent(t.id)) },
          el('td', {}, el('a', { href: '#/task/' + encodeURIComponent(t.id), text: t.businessKey })),
          el('td', { text: t.workflow + ' v' + t.version }),
          el('td', {}, pill(t.status), t.cancelRequested ? el('span', { class: 'muted', text: ' cancel requested' }) : null),
          el('td', { class: 'num', text: t.currentStep }),
          el('td', { class: 'num', text: t.failureCount }),
          el('td', {}, time(t.createdAt)),
          errorCell(t)));
      }
      if (!tbody.children.length && !r.body.next) tbody.append(el('tr', {}, el('td', { class: 'empty', colspan: 7, text: 'No task matches.' })));
      more.replaceChildren(r.body.next ? el('button', { id: 'more', type: 'button', onclick: () => load(r.body.next),
        text: r.body.tasks.length ? 'Load more' : 'Search further (' + r.body.scanned + ' tasks read)' }) : '');
    };
    await load(null);
    return () => pages;
  }

  // ---------------------------------------------------------------- agents

  async function agents() {
    const view = document.getElementById('view');
    const body = el('div', { id: 'agents' });
    view.replaceChildren(el('div', { class: 'title-row' }, el('h1', { text: 'Agents' }), refreshState()),
      el('p', { class: 'muted', text: 'Every agent endpoint called through a limit or a circuit breaker, as all nodes share it; and the tasks held back (WAITING) for each agent.' }),
      body);
    let shown = null;
    const fill = async () => {
      const r = await api('agents');
      if (!r.ok) throw new Error(r.body.error || r.status);
      if (JSON.stringify(r.body) === shown) return; // unchanged: keep the elements
      shown = JSON.stringify(r.body);
      const a = r.body;
      const parts = [];
      if (!a.supported) parts.push(el('p', { class: 'flash error', text: 'This state store keeps no flow-control state.' }));
      if (!a.agents.length) parts.push(el('p', { class: 'empty panel', text: 'No agent has been called through a limit or a circuit breaker yet.' }));
      for (const g of a.agents) {
        parts.push(el('section', { class: 'agent', data: { agent: g.name } },
          el('h2', {}, g.name, ' ', el('span', { class: 'badge held', data: { waiting: g.waiting }, text: g.waiting + ' held back' })),
          el('div', { class: 'panel' }, el('table', { class: 'endpoints' },
            el('thead', {}, el('tr', {}, ['Endpoint', 'Breaker', 'Since (UTC)', 'Open until (UTC)', 'In flight', 'Failed / calls in window', 'In a row', 'Last failure']
              .map((h) => el('th', { text: h })))),
            el('tbody', {}, g.endpoints.length ? g.endpoints.map((e) => el('tr', { class: 'endpoint', data: { endpoint: e.endpoint, breaker: e.breaker } },
              el('td', { class: 'mono', text: e.endpoint }), el('td', {}, pill(e.breaker, 'breaker')), el('td', {}, time(e.breakerSince)),
              el('td', {}, e.openUntil ? time(e.openUntil) : el('span', { class: 'muted', text: '—' })),
              el('td', { class: 'num in-flight', text: e.callsInFlight + (e.probesInFlight ? ' (' + e.probesInFlight + ' probes)' : '') }),
              el('td', { class: 'num', text: e.failuresInWindow + ' / ' + e.callsInWindow }),
              el('td', { class: 'num', text: e.consecutiveFailures }),
              el('td', { class: 'wrap last-failure' + (e.breaker === 'CLOSED' ? ' past' : ' err-text'), text: e.lastFailure || '' })))
              : el('tr', {}, el('td', { class: 'empty', colspan: 8, text: 'No endpoint state written yet.' }))))),
          g.waitingTasks.length ? el('ul', { class: 'sample held-tasks' }, g.waitingTasks.map((t) => el('li', {},
            el('a', { href: '#/task/' + encodeURIComponent(t.id), text: t.businessKey }), ' ', el('span', { class: 'muted', text: t.workflow + ' · ' + (t.lastError || '') }))),
          g.waiting > g.waitingTasks.length ? el('li', { class: 'muted', text: '… and ' + (g.waiting - g.waitingTasks.length) + ' more' }) : null) : null));
      }
      if (a.waitingUnattributed) parts.push(el('p', { class: 'muted', text: a.waitingUnattributed + ' WAITING task(s) name no agent.' }));
      if (a.waitingCapped) parts.push(el('p', { class: 'muted', text: 'Only the oldest ' + a.waitingTotal + ' WAITING tasks were read.' }));
      body.replaceChildren(...parts);
    };
    await fill();
    autoRefresh(fill);
  }

  // ---------------------------------------------------------------- schedules

  async function schedules() {
    const view = document.getElementById('view');
    const body = el('div', { id: 'schedules' });
    view.replaceChildren(el('div', { class: 'title-row' }, el('h1', { text: 'Schedules' }), refreshState()),
      el('p', { class: 'muted', text: 'Recurring schedules: each fire time submits one task, once across the cluster (business key name@fire time). Times in UTC.' }),
      body);
    let shown = null;
    const fill = async (force) => {
      const r = await api('schedules');
      if (!r.ok) throw new Error(r.body.error || r.status);
      if (!force && JSON.stringify(r.body) === shown) return; // unchanged: keep the elements
      shown = JSON.stringify(r.body);
      const s = r.body;
      const parts = [];
      if (!s.supported) parts.push(el('p', { class: 'flash error', text: 'This state store keeps no schedules.' }));
      else if (!s.schedules.length) parts.push(el('p', { class: 'empty panel', text: 'No schedule is registered.' }));
      else {
        const button = (x, action, label) => el('button', { type: 'button', class: 'schedule-' + action, disabled: !info.actions || !token(),
          title: info.actions ? (token() ? '' : 'Set the operator token first') : 'Read-only console',
          onclick: () => act('schedules/' + encodeURIComponent(x.name) + '/' + action, '', () => fill(true)), text: label });
        parts.push(el('div', { class: 'panel' }, el('table', { class: 'schedules' },
          el('thead', {}, el('tr', {}, ['Name', 'Fires', 'Workflow', 'State', 'Last fire', 'Next fire', 'Missed fires', '']
            .map((h) => el('th', { text: h })))),
          el('tbody', {}, s.schedules.map((x) => el('tr', { class: 'schedule', data: { schedule: x.name, paused: x.paused } },
            el('td', { class: 'mono', text: x.name }),
            el('td', { class: 'mono', text: x.trigger.replace(/^(cron|every):/, '$1 ') + (x.zone ? ' · ' + x.zone : '') }),
            el('td', { text: x.workflow + ' v' + x.workflowVersion }),
            el('td', {}, pill(x.paused ? 'PAUSED' : 'ACTIVE', 'schedule-state')),
            el('td', {}, time(x.lastFireTime)),
            el('td', {}, x.paused || !x.nextFireTime ? el('span', { class: 'muted', text: '—' }) : time(x.nextFireTime)),
            el('td', { class: 'missed', title: 'A fire time later than ' + x.missedAfter + ' is missed; the policy decides',
              text: x.missedFires + ' · late > ' + x.missedAfter.replace(/^PT/, '').toLowerCase() }),
            el('td', { class: 'actions' }, x.paused ? button(x, 'resume', 'Resume') : button(x, 'pause', 'Pause'), ' ',
              button(x, 'trigger', 'Run now'))))))));
      }
      body.replaceChildren(...parts);
    };
    await fill();
    autoRefresh(fill);
  }

  // ---------------------------------------------------------------- one task

  async function task(id) {
    const r = await api('tasks/' + encodeURIComponent(id));
    const view = document.getElementById('view');
    if (!r.ok) {
      view.replaceChildren(el('p', {}, el('a', { href: '#/', text: '← All tasks' })), el('p', { class: 'flash error', text: r.body.error || r.status }));
      return;
    }
    const t = r.body;
    const field = (label, value) => el('div', {}, el('dt', { text: label }), el('dd', {}, value));
    const step = t.steps.find((s) => s.index === t.currentStep);
    const meta = el('dl', { class: 'meta' },
      field('Task id', el('span', { class: 'mono', id: 'task-id', text: t.id })),
      field('Workflow', t.workflow + ' v' + t.version),
      field('Current step', t.currentStep + (step ? ' · ' + step.name : '')),
      field('Created (UTC)', time(t.createdAt)),
      field('Updated (UTC)', time(t.updatedAt)),
      field('Next attempt (UTC)', time(t.nextAttemptAt)),
      step && step.status === 'WAITING' ? field('Timer fires (UTC)', el('span', { id: 'timer-fires' }, time(t.nextAttemptAt))) : null,
      field('Deadline (UTC)', time(t.completeBy)),
      field('Held by node', t.lockedBy ? el('span', { class: 'mono', id: 'locked-by', text: t.lockedBy }) : el('span', { class: 'muted', text: 'nobody' })),
      field('Lease', String(t.lease)),
      field('Time-outs of this step', String(t.failureCount)),
      field('Priority', String(t.priority)),
      field('Cancel requested', t.cancelRequested ? 'yes' : 'no'),
      t.parent ? field('Child task of', el('span', { id: 'parent' }, el('a', { class: 'mono', href: '#/task/' + encodeURIComponent(t.parent.id), text: t.parent.id }),
        ' step ' + t.parent.step)) : null);

    const reason = el('input', { id: 'reason', type: 'text', maxlength: 500, placeholder: 'Reason (recorded in the timeline)', 'aria-label': 'Reason',
      value: reasons[t.id] || '', oninput: (e) => { reasons[t.id] = e.target.value; } });
    const actions = info.actions ? el('div', { class: 'actions' },
      reason,
      el('button', { id: 'resubmit', class: 'primary', type: 'button', disabled: !t.can.resubmit,
        title: t.can.resubmit ? 'Run the failed step again (or go on compensating)' : 'Only ERROR and COMPENSATION_FAILED tasks can be resubmitted',
        onclick: () => act('tasks/' + encodeURIComponent(t.id) + '/resubmit', reason.value.trim(), render), text: 'Resubmit' }),
      el('button', { id: 'cancel', class: 'danger', type: 'button', disabled: !t.can.cancel,
        title: t.can.cancel ? 'Compensate its completed steps and end it CANCELLED' : 'This task cannot be cancelled now',
        onclick: () => { if (confirm('Cancel task ' + t.businessKey + '? Its completed steps are compensated.')) act('tasks/' + encodeURIComponent(t.id) + '/cancel', reason.value.trim(), render); },
        text: 'Cancel' }),
      el('button', { id: 'move', type: 'button', disabled: !t.can.move,
        title: t.can.move ? 'Move it to another version of ' + t.workflow + ' (the version declares where each step continues)' : 'Only a PENDING, WAITING, PARKED or ERROR task that nobody holds can be moved',
        onclick: () => { const v = prompt('Move task ' + t.businessKey + ' from v' + t.version + ' to which version?', String(t.version + 1)); if (v) act('tasks/' + encodeURIComponent(t.id) + '/move?toVersion=' + encodeURIComponent(v.trim()), reason.value.trim(), render); },
        text: 'Move version…' }),
      token() ? null : el('span', { class: 'muted', text: 'Actions need the operator token (top right).' })) : null;

    const steps = el('div', { class: 'panel' }, el('table', { id: 'steps' },
      el('thead', {}, el('tr', {}, ['#', 'Step', 'State', 'Attempts', 'Started (UTC)', 'Finished (UTC)', 'Compensation', 'Error', 'Output']
        .map((h) => el('th', { text: h })))),
      el('tbody', {}, t.steps.map((s) => el('tr', { data: { step: s.name } },
        el('td', { text: s.index }), el('td', { text: s.name }), el('td', {}, pill(s.status, 'step')),
        el('td', { class: 'num', text: s.attempts }), el('td', {}, time(s.startedAt)), el('td', {}, time(s.finishedAt)),
        el('td', {}, s.compensation ? pill(s.compensation, 'step') : ''),
        el('td', { class: 'wrap ' + (s.status === 'FAILED' || s.compensation === 'COMPENSATION_FAILED' ? 'err-text' : 'past'),
          title: s.error && s.status !== 'FAILED' ? 'An earlier attempt failed; the step went on' : null, text: s.error || '' }),
        el('td', { class: 'wrap mono' }, info.payloads ? (s.output || '') : (s.outputHidden ? el('span', { class: 'muted', title: 'Payloads are hidden: see SasConsole.Builder.showPayloads', text: 'hidden' }) : '')))))));

    const kids = t.children || [];
    const children = kids.length ? el('div', { class: 'panel' }, el('table', { id: 'children' },
      el('thead', {}, el('tr', {}, ['Step', 'Branch', 'Task', 'Workflow', 'State'].map((h) => el('th', { text: h })))),
      el('tbody', {}, kids.map((c) => el('tr', { data: { step: c.step, branch: c.branch || '' } },
        el('td', { text: c.step }), el('td', { text: c.branch || '' }),
        el('td', {}, el('a', { class: 'mono', href: '#/task/' + encodeURIComponent(c.id), text: c.id })),
        el('td', { text: c.workflow }), el('td', {}, pill(c.status))))))) : null;

    const events = el('div', { class: 'panel' }, el('table', { id: 'events' },
      el('thead', {}, el('tr', {}, ['When (UTC)', 'By', 'What', 'Step', 'Attempt', 'Detail'].map((h) => el('th', { text: h })))),
      el('tbody', {}, t.events.map((e) => el('tr', { data: { type: e.type } },
        el('td', {}, time(e.at)),
        el('td', {}, el('span', { class: 'by ' + e.by, title: e.operator ? 'operator' : null, data: e.operator ? { operator: e.operator } : null, text: e.operator || e.by })),
        el('td', { text: e.type }), el('td', { text: e.step || (e.stepIndex >= 0 ? '#' + e.stepIndex : '') }),
        el('td', { class: 'num', text: e.attempt || '' }),
        el('td', { class: 'wrap' + (e.operator ? ' reason' : ''), text: e.operator ? (e.reason || '(no reason given)') : (e.message || '') }))))));

    const needs = NEEDS_OPERATOR.includes(t.status);
    view.replaceChildren(
      el('p', {}, el('a', { href: '#/', text: '← All tasks' })),
      el('h1', {}, el('span', { id: 'business-key', text: t.businessKey }), el('span', { id: 'status' }, pill(t.status)),
        t.cancelRequested ? el('span', { class: 'muted', text: 'cancel requested' }) : null),
      meta,
      t.lastError ? el('div', { class: 'error-box' + (needs ? '' : HELD.includes(t.status) ? ' held' : ' past'), id: 'last-error' },
        el('span', { class: 'label', text: needs ? 'Error' : HELD.includes(t.status) ? 'Why it waits' : 'Last error recorded (past)' }), t.lastError) : null,
      actions,
      el('h2', { text: 'Steps' }), steps,
      ...(children ? [el('h2', { text: 'Branches and child tasks' }), children] : []),
      el('h2', { text: 'Timeline' }), events);
    if (ACTIVE.includes(t.status)) {
      const mine = generation;
      const again = () => {
        if (mine !== generation || document.hidden) return; // visibilitychange renders it again
        if (document.activeElement && document.activeElement.id === 'reason') refreshTimer = setTimeout(again, 1500);
        else render();
      };
      refreshTimer = setTimeout(again, 1500);
    }
  }

  // ---------------------------------------------------------------- wiring

  async function render() {
    clearTimeout(refreshTimer);
    refresher = null;
    generation++;
    const r = route();
    document.getElementById('search-q').value = r.params.q || '';
    document.querySelectorAll('nav.nav a').forEach((a) => a.classList.toggle('current', a.dataset.view === (r.path === '/agents' ? 'agents' : r.path === '/schedules' ? 'schedules' : 'tasks')));
    try {
      if (r.path.startsWith('/task/')) {
        await task(decodeURIComponent(r.path.substring('/task/'.length)));
      } else if (r.path === '/agents') {
        await agents();
      } else if (r.path === '/schedules') {
        await schedules();
      } else {
        await overview(r.params);
      }
    } catch (e) {
      flash('error', 'Cannot load: ' + e.message);
    }
  }

  async function start() {
    const r = await api('info');
    if (r.ok) info = r.body;
    document.getElementById('title').textContent = info.title;
    document.title = info.title + ' · SAS console';
    renderAuth();
    document.getElementById('search').addEventListener('submit', (e) => {
      e.preventDefault();
      const q = document.getElementById('search-q').value.trim();
      go('/', q ? { q } : {});
    });
    window.addEventListener('hashchange', () => { document.getElementById('flash').hidden = true; render(); });
    document.addEventListener('visibilitychange', () => {
      if (document.hidden) { clearTimeout(refreshTimer); const s = document.getElementById('refresh-state'); if (s && refresher) s.textContent = 'Auto-refresh paused while the tab is hidden'; }
      else if (refresher) { refresher().catch(() => {}); schedule(); }
      else if (route().path.startsWith('/task/')) render();
    });
    await render();
  }

  start();
}());
