// SAS console. Plain JavaScript, no build step, no dependencies. Every value from the server is
// put into the page as text (textContent), never as HTML.
'use strict';
(function () {
  const TOKEN_KEY = 'sas.console.token';
  const ACTIVE = ['PENDING', 'WAITING', 'PARKED', 'PROCESSING', 'AWAITING_REPLY', 'COMPENSATING'];
  const NEEDS_OPERATOR = ['ERROR', 'COMPENSATION_FAILED', 'PARKED'];
  const SHORT = {
    PENDING: 'Pending', WAITING: 'Waiting', PARKED: 'Parked', PROCESSING: 'Processing',
    AWAITING_REPLY: 'Awaiting reply', PROCESSED: 'Processed', ERROR: 'Error',
    COMPENSATING: 'Compensating', COMPENSATED: 'Compensated', COMPENSATION_FAILED: 'Comp. failed', CANCELLED: 'Cancelled'
  };
  let info = { title: 'SAS', actions: false, payloads: false, tokenHeader: 'X-SAS-Console-Token', statuses: [] };
  let refreshTimer = null;
  let flashTimer = null;

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
    const res = await fetch('api/' + path, { method: method || 'GET', headers, credentials: 'omit', cache: 'no-store' });
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
      box.append(el('span', { class: 'badge', id: 'operator', text: 'operator token set' }),
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

  async function act(path, done) {
    const r = await api(path, 'POST');
    if (r.ok) {
      flash('ok', r.body.message || 'done');
    } else {
      if (r.status === 403 && token() && /token is wrong/.test(r.body.error || '')) {
        sessionStorage.removeItem(TOKEN_KEY);
        renderAuth();
      }
      flash('error', 'Refused: ' + (r.body.error || r.status));
    }
    if (done) await done();
  }

  // ---------------------------------------------------------------- overview and lists

  async function overview(params) {
    const r = await api('overview');
    if (!r.ok) throw new Error(r.body.error || r.status);
    const o = r.body;
    const statuses = info.statuses;
    const cards = el('div', { class: 'cards', id: 'counts' },
      el('a', { class: 'card' + (!params.status && !params.q ? ' selected' : ''), href: '#' + '/' + query({ workflow: params.workflow }),
        data: { status: 'ALL' } }, el('div', { class: 'label', text: 'All tasks' }), el('div', { class: 'n', text: o.total })),
      statuses.map((s) => el('a', {
        class: 'card' + (o.counts[s] ? '' : ' zero') + (params.status === s ? ' selected' : ''),
        href: '#/' + query({ status: s, workflow: params.workflow }), data: { status: s }
      }, el('div', { class: 'label', text: SHORT[s] || s }), el('div', { class: 'n', text: o.counts[s] || 0 }))));

    const head = el('tr', {}, el('th', { text: 'Workflow' }), statuses.map((s) => el('th', { class: 'num', text: SHORT[s] || s })),
      el('th', { class: 'num', text: 'Total' }), info.actions ? el('th', { text: '' }) : null);
    const rows = o.workflows.map((w) => el('tr', { data: { workflow: w.name } },
      el('td', {}, el('a', { href: '#/' + query({ workflow: w.name }), text: w.name })),
      statuses.map((s) => el('td', { class: 'num' }, el('a', {
        class: w.counts[s] ? '' : 'zero', href: '#/' + query({ status: s, workflow: w.name }), text: w.counts[s] || 0
      }))),
      el('td', { class: 'num', text: w.total }),
      info.actions ? el('td', {}, w.counts.ERROR ? el('button', {
        class: 'danger bulk-resubmit', type: 'button', data: { workflow: w.name },
        onclick: () => {
          if (confirm('Resubmit all ' + w.counts.ERROR + ' ERROR tasks of ' + w.name + '?')) {
            act('workflows/' + encodeURIComponent(w.name) + '/resubmit-errors', render);
          }
        }, text: 'Resubmit ' + w.counts.ERROR + ' in error'
      }) : null) : null));
    const workflows = el('div', { class: 'panel' }, el('table', { id: 'workflows' }, el('thead', {}, head),
      el('tbody', {}, rows.length ? rows : el('tr', {}, el('td', { class: 'empty', colspan: statuses.length + 3, text: 'No tasks yet.' })))));

    const view = document.getElementById('view');
    view.replaceChildren(el('h1', { text: 'Tasks' }), cards, el('h2', { text: 'By workflow' }), workflows);
    await taskList(view, params);
  }

  async function taskList(view, params) {
    const chips = [];
    const clear = (key) => { const p = Object.assign({}, params); delete p[key]; go('/', p); };
    if (params.q) chips.push(el('span', { class: 'chip' }, 'key or id “' + params.q + '”', el('button', { type: 'button', title: 'clear', onclick: () => clear('q'), text: '×' })));
    if (params.status) chips.push(el('span', { class: 'chip' }, params.status, el('button', { type: 'button', title: 'clear', onclick: () => clear('status'), text: '×' })));
    if (params.workflow) chips.push(el('span', { class: 'chip' }, 'workflow ' + params.workflow, el('button', { type: 'button', title: 'clear', onclick: () => clear('workflow'), text: '×' })));
    const tbody = el('tbody', { id: 'task-rows' });
    const more = el('div', { class: 'more' });
    view.append(el('div', { class: 'toolbar' }, el('h2', { text: params.q ? 'Search' : 'Tasks, oldest first' }), chips),
      el('div', { class: 'panel' }, el('table', { id: 'tasks' }, el('thead', {}, el('tr', {},
        el('th', { text: 'Business key' }), el('th', { text: 'Workflow' }), el('th', { text: 'State' }),
        el('th', { class: 'num', text: 'Step' }), el('th', { class: 'num', text: 'Time-outs' }), el('th', { text: 'Updated (UTC)' }),
        el('th', { text: 'Last error' }))), tbody), more));

    const load = async (after) => {
      const r = params.q
        ? await api('search' + query({ q: params.q, workflow: params.workflow }))
        : await api('tasks' + query({ status: params.status, workflow: params.workflow, afterCreatedAt: after && after.afterCreatedAt, afterId: after && after.afterId }));
      if (!r.ok) throw new Error(r.body.error || r.status);
      for (const t of r.body.tasks) {
        tbody.append(el('tr', { class: 'task-row', data: { id: t.id, status: t.status }, onclick: () => go('/task/' + encodeURIComponent(t.id)) },
          el('td', {}, el('a', { href: '#/task/' + encodeURIComponent(t.id), text: t.businessKey })),
          el('td', { text: t.workflow + ' v' + t.version }),
          el('td', {}, pill(t.status), t.cancelRequested ? el('span', { class: 'muted', text: ' cancel requested' }) : null),
          el('td', { class: 'num', text: t.currentStep }),
          el('td', { class: 'num', text: t.failureCount }),
          el('td', {}, time(t.updatedAt)),
          el('td', { class: 'err', title: t.lastError || '', text: t.lastError || '' })));
      }
      if (!tbody.children.length) tbody.append(el('tr', {}, el('td', { class: 'empty', colspan: 7, text: 'No task matches.' })));
      more.replaceChildren(r.body.next ? el('button', { id: 'more', type: 'button', onclick: () => load(r.body.next), text: 'Load more' }) : '');
    };
    await load(null);
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
      field('Deadline (UTC)', time(t.completeBy)),
      field('Held by node', t.lockedBy ? el('span', { class: 'mono', id: 'locked-by', text: t.lockedBy }) : el('span', { class: 'muted', text: 'nobody' })),
      field('Lease', String(t.lease)),
      field('Time-outs of this step', String(t.failureCount)),
      field('Priority', String(t.priority)),
      field('Cancel requested', t.cancelRequested ? 'yes' : 'no'));

    const actions = info.actions ? el('div', { class: 'actions' },
      el('button', { id: 'resubmit', class: 'primary', type: 'button', disabled: !t.can.resubmit,
        title: t.can.resubmit ? 'Run the failed step again (or go on compensating)' : 'Only ERROR and COMPENSATION_FAILED tasks can be resubmitted',
        onclick: () => act('tasks/' + encodeURIComponent(t.id) + '/resubmit', render), text: 'Resubmit' }),
      el('button', { id: 'cancel', class: 'danger', type: 'button', disabled: !t.can.cancel,
        title: t.can.cancel ? 'Compensate its completed steps and end it CANCELLED' : 'This task cannot be cancelled now',
        onclick: () => { if (confirm('Cancel task ' + t.businessKey + '? Its completed steps are compensated.')) act('tasks/' + encodeURIComponent(t.id) + '/cancel', render); },
        text: 'Cancel' }),
      token() ? null : el('span', { class: 'muted', text: 'Actions need the operator token (top right).' })) : null;

    const steps = el('div', { class: 'panel' }, el('table', { id: 'steps' },
      el('thead', {}, el('tr', {}, ['#', 'Step', 'State', 'Attempts', 'Started (UTC)', 'Finished (UTC)', 'Compensation', 'Error', 'Output']
        .map((h) => el('th', { text: h })))),
      el('tbody', {}, t.steps.map((s) => el('tr', { data: { step: s.name } },
        el('td', { text: s.index }), el('td', { text: s.name }), el('td', {}, pill(s.status, 'step')),
        el('td', { class: 'num', text: s.attempts }), el('td', {}, time(s.startedAt)), el('td', {}, time(s.finishedAt)),
        el('td', {}, s.compensation ? pill(s.compensation, 'step') : ''),
        el('td', { class: 'wrap err-text', text: s.error || '' }),
        el('td', { class: 'wrap mono' }, info.payloads ? (s.output || '') : (s.outputHidden ? el('span', { class: 'muted', title: 'Payloads are hidden: see SasConsole.Builder.showPayloads', text: 'hidden' }) : '')))))));

    const events = el('div', { class: 'panel' }, el('table', { id: 'events' },
      el('thead', {}, el('tr', {}, ['When (UTC)', 'By', 'What', 'Step', 'Attempt', 'Detail'].map((h) => el('th', { text: h })))),
      el('tbody', {}, t.events.map((e) => el('tr', { data: { type: e.type } },
        el('td', {}, time(e.at)), el('td', {}, el('span', { class: 'by ' + e.by, text: e.by })),
        el('td', { text: e.type }), el('td', { text: e.step || (e.stepIndex >= 0 ? '#' + e.stepIndex : '') }),
        el('td', { class: 'num', text: e.attempt || '' }), el('td', { class: 'wrap', text: e.message || '' }))))));

    view.replaceChildren(
      el('p', {}, el('a', { href: '#/', text: '← All tasks' })),
      el('h1', {}, el('span', { id: 'business-key', text: t.businessKey }), el('span', { id: 'status' }, pill(t.status)),
        t.cancelRequested ? el('span', { class: 'muted', text: 'cancel requested' }) : null),
      meta,
      t.lastError ? el('div', { class: 'error-box' + (NEEDS_OPERATOR.includes(t.status) ? '' : ' past'), id: 'last-error' },
        el('span', { class: 'label', text: NEEDS_OPERATOR.includes(t.status) ? 'Error' : 'Last error recorded' }), t.lastError) : null,
      actions,
      el('h2', { text: 'Steps' }), steps,
      el('h2', { text: 'Timeline' }), events);
    if (ACTIVE.includes(t.status)) {
      refreshTimer = setTimeout(render, 1500);
    }
  }

  // ---------------------------------------------------------------- wiring

  async function render() {
    clearTimeout(refreshTimer);
    const r = route();
    document.getElementById('search-q').value = r.params.q || '';
    try {
      if (r.path.startsWith('/task/')) {
        await task(decodeURIComponent(r.path.substring('/task/'.length)));
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
    await render();
  }

  start();
}());
