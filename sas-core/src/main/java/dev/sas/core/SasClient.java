package dev.sas.core;

import dev.sas.core.internal.AgentGates;
import dev.sas.core.internal.DatabaseClock;
import dev.sas.core.internal.PayloadLimit;
import dev.sas.core.internal.SubmitGroup;
import dev.sas.core.internal.Waiters;
import dev.sas.core.spi.ClaimedTask;
import dev.sas.core.spi.NewTask;
import dev.sas.core.spi.ReplyOutbox;
import dev.sas.core.spi.StateStore;
import dev.sas.core.spi.StorableText;
import dev.sas.core.spi.SubmitResult;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What any tier holds to work with tasks: submit them, find, list and count them, wait for their
 * result, and resubmit or cancel them; and to see and reset the agents' circuit breakers. It starts no threads and needs no running scheduler in
 * this process: tasks run on whichever {@link SasRuntime} (in this JVM or another) shares the
 * store. A web tier holds only this.
 *
 * <pre>{@code
 * SasClient client = SasClient.builder().stateStore(store).build();
 * TaskHandle order = client.submit(orders, "order-42", new Order(...));
 * TaskResult result = order.await(Duration.ofSeconds(30));
 * }</pre>
 *
 * <p>Thread-safe. Holds nothing to close: the store is the caller's.
 */
public final class SasClient {
    private static final Logger log = LoggerFactory.getLogger(SasClient.class);
    private static final EnumSet<TaskStatus> RESUBMITTABLE = EnumSet.of(TaskStatus.ERROR, TaskStatus.COMPENSATION_FAILED);

    /** Default largest encoded input or step output: 1 MiB. */
    public static final int DEFAULT_MAX_PAYLOAD_BYTES = 1024 * 1024;
    /** Longest business key. */
    public static final int MAX_BUSINESS_KEY_LENGTH = 200;

    private final Config config;
    private final StateStore store;
    private final DatabaseClock clock;
    private final PayloadLimit payloadLimit;
    private final SubmitGroup submitGroup;
    private final Map<String, Workflow<?>> known = new ConcurrentHashMap<>();
    private final java.util.Set<String> registeredReplyChannels = ConcurrentHashMap.newKeySet();
    private final ClientHooks hooks;
    private final Waiters waiters;
    private final dev.sas.core.internal.ReplyTokens replyTokens;
    private final SasSchedules schedules;

    /**
     * The client's settings, as built. Immutable.
     *
     * @param stateStore where tasks live
     * @param clock the local clock: moved by its measured offset to the store's clock, it gives
     *     submission and due times; alone it measures local waits
     * @param databaseClock whether submission and due times follow the store's clock
     * @param maxPayloadBytes largest encoded input or step output, in UTF-8 bytes
     * @param tracing captures the submitter's trace context to store with each task
     * @param replyTokenKeys the keys that sign and check reply tokens, or null if none were given (then
     *     {@link #completeStep} and {@link #failStep} throw)
     */
    public record Config(StateStore stateStore, Clock clock, boolean databaseClock, int maxPayloadBytes,
            Tracing tracing, ReplyTokenKeys replyTokenKeys) {

        /** Settings without reply token keys. */
        public Config(StateStore stateStore, Clock clock, boolean databaseClock, int maxPayloadBytes,
                Tracing tracing) {
            this(stateStore, clock, databaseClock, maxPayloadBytes, tracing, null);
        }

        /** Settings without tracing and reply token keys. */
        public Config(StateStore stateStore, Clock clock, boolean databaseClock, int maxPayloadBytes) {
            this(stateStore, clock, databaseClock, maxPayloadBytes, Tracing.none(), null);
        }
    }

    SasClient(Config config, DatabaseClock clock, List<Workflow<?>> workflows, ClientHooks hooks) {
        this.config = config;
        this.store = config.stateStore();
        this.clock = clock;
        this.payloadLimit = new PayloadLimit(config.maxPayloadBytes());
        this.submitGroup = new SubmitGroup(store);
        this.hooks = hooks;
        this.waiters = new Waiters(store.signals().orElse(null));
        this.replyTokens = ReplyTokenKeys.tokens(config.replyTokenKeys());
        this.schedules = new SasSchedules(this, store, clock, payloadLimit, hooks);
        workflows.forEach(this::remember);
    }

    /** The threads of this client waiting for tasks, and what wakes them. */
    Waiters waiters() {
        return waiters;
    }

    /** A new builder. Not thread-safe. */
    public static Builder builder() {
        return new Builder();
    }

    /** The settings this client was built with. */
    public Config config() {
        return config;
    }

    /** The store's recurring schedules: register, list, pause, resume, trigger ({@link Schedule}). */
    public SasSchedules schedules() {
        return schedules;
    }

    private void remember(Workflow<?> w) {
        known.putIfAbsent(w.name() + '#' + w.version(), w);
    }

    // ------------------------------------------------------------------ submission

    /** Submits a task with default options; see {@link #submit(Workflow, String, Object, SubmitOptions)}. */
    public <I> TaskHandle submit(Workflow<I> workflow, String businessKey, I input) {
        return submit(workflow, businessKey, input, SubmitOptions.defaults());
    }

    /**
     * Submits a task: one run of {@code workflow} for {@code input}. A second submit with the same
     * business key for the same workflow returns a handle to the first task and changes nothing
     * ({@link TaskHandle#created()} is then false). The task is durable when this returns (or,
     * with {@link SubmitOptions.Builder#transaction}, or in the host transaction the store finds
     * the calling thread in ({@link dev.sas.core.spi.StateStore#hostTransaction()}, e.g. Spring's),
     * when the host commits). Threads submitting
     * at the same time share store transactions (group commit): each returns once its own task is
     * durable, and many request threads get close to {@link #submitAll} throughput.
     *
     * @return a handle to the task
     * @throws NullPointerException if an argument is null
     * @throws IllegalArgumentException if the business key is blank, too long, ends with a space
     *     (MariaDB and MySQL would take it for the key without it), or holds an unpaired
     *     UTF-16 surrogate or a NUL character (a database would alter or refuse it), or the input
     *     cannot be encoded, encodes to a blank string or to text holding such a character, or is
     *     larger than {@code maxPayloadBytes}, or the options name a reply channel that no node has
     *     registered ({@link RuntimeBuilder#replyChannel(ReplyChannel)}, {@link ReplyConsumer})
     * @throws StateStoreException if the store failed; the task may then not exist
     */
    public <I> TaskHandle submit(Workflow<I> workflow, String businessKey, I input, SubmitOptions options) {
        Objects.requireNonNull(options, "options must not be null");
        checkReplyChannel(options.replyTo());
        NewTask task = newTask(workflow, businessKey, input, options, now());
        TaskEvent received = received(task);
        Object transaction = transaction(options);
        String claimFor = transaction == null ? hooks.reserveStart(task) : null;
        if (claimFor != null) {
            return submitClaimed(task, received, options, claimFor);
        }
        SubmitResult result = transaction == null ? submitGroup.submit(task, received)
                : store.submit(task, received, transaction);
        afterSubmit(List.of(task), List.of(received), List.of(result), options, transaction != null, false);
        return new TaskHandle(this, result.taskId(), result.created());
    }

    /**
     * A submit to this node's own runtime while it has room: the task is inserted already claimed
     * by it and starts after the commit, without a claim's round trip and commit.
     */
    private TaskHandle submitClaimed(NewTask task, TaskEvent received, SubmitOptions options, String instanceId) {
        SubmitResult result;
        try {
            result = store.submitClaimed(task, received, instanceId);
        } catch (RuntimeException | Error e) {
            hooks.startReserved(null);
            throw e;
        }
        try {
            afterSubmit(List.of(task), List.of(received), List.of(result), options, false, result.created());
        } finally {
            // listeners hear RECEIVED before the start's STEP_STARTED
            hooks.startReserved(result.created() ? ClaimedTask.atSubmit(task) : null);
        }
        return new TaskHandle(this, result.taskId(), result.created());
    }

    /** Submits many tasks with default options; see {@link #submitAll(Workflow, Map, SubmitOptions)}. */
    public <I> List<TaskHandle> submitAll(Workflow<I> workflow, Map<String, ? extends I> inputsByBusinessKey) {
        return submitAll(workflow, inputsByBusinessKey, SubmitOptions.defaults());
    }

    /**
     * Submits one task per entry (business key to input) in one store transaction (or in the
     * host's, with {@link SubmitOptions.Builder#transaction}), all with the same options. Every
     * input is checked before anything is written, so a bad one fails the whole call and writes
     * nothing. Duplicates of existing tasks return handles to those tasks.
     *
     * @return one handle per entry, in the map's iteration order
     * @throws NullPointerException if an argument, key or input is null
     * @throws IllegalArgumentException as for {@link #submit(Workflow, String, Object, SubmitOptions)},
     *     naming the business key at fault
     * @throws StateStoreException if the store failed; then none of the tasks was written
     */
    public <I> List<TaskHandle> submitAll(Workflow<I> workflow, Map<String, ? extends I> inputsByBusinessKey,
            SubmitOptions options) {
        Objects.requireNonNull(inputsByBusinessKey, "inputsByBusinessKey must not be null");
        Objects.requireNonNull(options, "options must not be null");
        checkReplyChannel(options.replyTo());
        Instant now = now();
        List<NewTask> tasks = new ArrayList<>(inputsByBusinessKey.size());
        List<TaskEvent> received = new ArrayList<>(inputsByBusinessKey.size());
        for (Map.Entry<String, ? extends I> e : inputsByBusinessKey.entrySet()) {
            NewTask task = newTask(workflow, e.getKey(), e.getValue(), options, now);
            tasks.add(task);
            received.add(received(task));
        }
        if (tasks.isEmpty()) {
            return List.of();
        }
        Object transaction = transaction(options);
        List<SubmitResult> results = store.submitAll(tasks, received, transaction);
        afterSubmit(tasks, received, results, options, transaction != null, false);
        List<TaskHandle> handles = new ArrayList<>(results.size());
        for (SubmitResult r : results) {
            handles.add(new TaskHandle(this, r.taskId(), r.created()));
        }
        return handles;
    }

    /**
     * Refuses a reply channel no node consumes: its messages would wait in the outbox and the
     * application would never hear of its task. Channels found registered are remembered; an unknown
     * one is looked up in the store on every submit naming it (until it is registered).
     */
    private void checkReplyChannel(String channel) {
        if (channel == null || registeredReplyChannels.contains(channel) || hooks.consumesReplyChannel(channel)) {
            return;
        }
        ReplyOutbox outbox = store.replyOutbox().orElseThrow(() -> new IllegalArgumentException("replyTo '"
                + channel + "': the store " + store + " keeps no reply channels; use a store that does"
                + " (JdbcStateStore, InMemoryStateStore) or submit without replyTo"));
        registeredReplyChannels.addAll(outbox.channels());
        if (!registeredReplyChannels.contains(channel)) {
            throw new IllegalArgumentException("reply channel '" + channel + "' is not registered: no runtime"
                    + " (RuntimeBuilder.replyChannel) or ReplyConsumer has registered it with this store, so nobody"
                    + " would receive its messages. Register the channel first (on the node that consumes it), or"
                    + " submit without replyTo");
        }
    }

    /**
     * Refuses what a database would alter or refuse in a key: an unpaired UTF-16 surrogate is
     * stored as '?' (so two different keys would become one task), and PostgreSQL rejects NUL.
     */
    private static void checkStorable(Workflow<?> workflow, String businessKey) {
        String problem = StorableText.problem("businessKey", businessKey);
        if (problem != null) {
            throw new IllegalArgumentException(problem + " (workflow '" + workflow.name() + "'); a database would"
                    + " store the key altered or not at all. Use valid Unicode text without NUL");
        }
    }

    private <I> NewTask newTask(Workflow<I> workflow, String businessKey, I input, SubmitOptions options, Instant now) {
        Objects.requireNonNull(workflow, "workflow must not be null");
        Objects.requireNonNull(businessKey, "businessKey must not be null");
        Objects.requireNonNull(input, "input must not be null (workflow '" + workflow.name() + "' business key '"
                + businessKey + "')");
        if (businessKey.isBlank()) {
            throw new IllegalArgumentException("businessKey must not be blank (workflow '" + workflow.name() + "')");
        }
        if (businessKey.length() > MAX_BUSINESS_KEY_LENGTH) {
            throw new IllegalArgumentException("businessKey must be at most " + MAX_BUSINESS_KEY_LENGTH
                    + " characters, was " + businessKey.length() + " (workflow '" + workflow.name() + "')");
        }
        checkStorable(workflow, businessKey);
        if (businessKey.endsWith(" ")) {
            throw new IllegalArgumentException("businessKey '" + businessKey + "' ends with a space (workflow '"
                    + workflow.name() + "'): MariaDB and MySQL compare keys ignoring trailing spaces, so it would"
                    + " name the same task as '" + businessKey.stripTrailing() + "'. SAS refuses such keys on every"
                    + " store; trim the key");
        }
        String what = "input for workflow '" + workflow.name() + "' business key '" + businessKey + "'";
        String encoded;
        try {
            encoded = workflow.inputCodec().encode(input);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException(what + " cannot be encoded: " + e.getMessage(), e);
        }
        if (encoded == null || encoded.isBlank()) {
            throw new IllegalArgumentException(what + " encodes to a blank string; pass a real input");
        }
        int bytes = payloadLimit.excess(encoded);
        if (bytes >= 0) {
            throw new IllegalArgumentException(payloadLimit.message(what, bytes));
        }
        String unstorable = StorableText.problem(what + " (encoded)", encoded);
        if (unstorable != null) {
            throw new IllegalArgumentException(unstorable + "; no database can store it (PostgreSQL refuses it,"
                    + " others would alter it): have the workflow's input codec escape or encode it (JSON, base64)");
        }
        remember(workflow);
        StepDefinition<I> first = workflow.steps().get(0);
        TaskId id = TaskId.random();
        return new NewTask(id, workflow.name(), workflow.version(), businessKey, options.priority(),
                encoded, options.replyTo(), first.name(), first.completeWithin(), now, now.plus(options.delay()),
                traceContext(workflow.name(), id));
    }

    /** The submitting thread's trace context; a tracing failure leaves the task untraced, never fails the submit. */
    private String traceContext(String workflow, TaskId id) {
        try {
            String context = config.tracing().capture(workflow, id);
            if (context != null && context.length() > NewTask.MAX_TRACE_CONTEXT_LENGTH) {
                log.warn("task {}: trace context of {} characters not stored (at most {})", id, context.length(),
                        NewTask.MAX_TRACE_CONTEXT_LENGTH);
                return null;
            }
            return context;
        } catch (RuntimeException e) {
            log.warn("task {}: capturing the trace context failed; the task is not traced ({})", id, e.toString());
            return null;
        }
    }

    private static TaskEvent received(NewTask t) {
        return new TaskEvent(t.taskId(), t.businessKey(), t.workflow(), TaskEvent.Type.RECEIVED, -1, null, 0,
                t.createdAt(), null);
    }

    /** The options' transaction, else the one the store finds the calling thread in, else null. */
    private Object transaction(SubmitOptions options) {
        return options.transaction() != null ? options.transaction() : store.hostTransaction();
    }

    /**
     * Logs each submission and hands the RECEIVED events of the tasks that were created to the
     * hooks; {@code claimed}: this node's runtime holds them already, so no claim is due.
     */
    private void afterSubmit(List<NewTask> tasks, List<TaskEvent> received, List<SubmitResult> results,
            SubmitOptions options, boolean inHostTransaction, boolean claimed) {
        List<TaskEvent> created = new ArrayList<>();
        for (int i = 0; i < results.size(); i++) {
            NewTask t = tasks.get(i);
            if (results.get(i).created()) {
                created.add(received.get(i));
                log.debug("task {} submitted: workflow {} v{}, business key {}", t.taskId(), t.workflow(),
                        t.workflowVersion(), t.businessKey());
            } else {
                log.debug("task {}: duplicate submission for business key {} ignored", results.get(i).taskId(),
                        t.businessKey());
            }
        }
        if (!created.isEmpty()) {
            hooks.submitted(created, options.replyTo(), options.delay().isZero() && !claimed, inHostTransaction);
        }
    }

    // ------------------------------------------------------------------ reading

    /**
     * A handle to an existing task (nothing is read until it is used).
     *
     * @throws NullPointerException if {@code taskId} is null
     */
    public TaskHandle handle(TaskId taskId) {
        return new TaskHandle(this, Objects.requireNonNull(taskId, "taskId must not be null"), false);
    }

    /**
     * The task with all its steps: recorded ones as stored, the others (when this client knows
     * the workflow: it submitted to it or was built with it) as {@code PENDING}.
     *
     * <p>An id that no database can hold (a NUL character, an unpaired surrogate) names no task:
     * the lookups, {@link #events}, {@link #list}, {@link #cancel} and {@link #resubmit} answer it as
     * not found without asking the store (PostgreSQL's driver would throw on it).
     *
     * @throws NullPointerException if {@code taskId} is null
     * @throws StateStoreException if the store failed
     */
    public Optional<TaskInfo> find(TaskId taskId) {
        Objects.requireNonNull(taskId, "taskId must not be null");
        if (unstorable(taskId.value())) {
            return Optional.empty();
        }
        return store.find(taskId).map(info -> StatusView.withAllSteps(info,
                known.get(info.workflow() + '#' + info.workflowVersion())));
    }

    /**
     * The task submitted to {@code workflow} with exactly {@code businessKey}: never the task of
     * another key, on any store (MariaDB's {@code 'k'} and {@code 'k '} included).
     *
     * @throws NullPointerException if an argument is null
     * @throws StateStoreException if the store failed
     */
    public Optional<TaskInfo> find(String workflow, String businessKey) {
        Objects.requireNonNull(workflow, "workflow must not be null");
        Objects.requireNonNull(businessKey, "businessKey must not be null");
        if (unstorable(workflow) || unstorable(businessKey)) {
            return Optional.empty();
        }
        return store.findByBusinessKey(workflow, businessKey).flatMap(this::find);
    }

    /**
     * The task's recorded events, oldest first.
     *
     * @throws NullPointerException if {@code taskId} is null
     * @throws StateStoreException if the store failed
     */
    public List<TaskEvent> events(TaskId taskId) {
        Objects.requireNonNull(taskId, "taskId must not be null");
        return unstorable(taskId.value()) ? List.of() : store.events(taskId);
    }

    /**
     * Tasks matching {@code query}, oldest first, without their steps. Page with
     * {@link TaskQuery#after(TaskInfo)}.
     *
     * @throws NullPointerException if {@code query} is null
     * @throws StateStoreException if the store failed
     */
    public List<TaskInfo> list(TaskQuery query) {
        Objects.requireNonNull(query, "query must not be null");
        if (unstorable(query.workflow()) || (query.afterTaskId() != null && unstorable(query.afterTaskId().value()))) {
            return List.of();
        }
        return store.list(query);
    }

    /** Whether no database can hold {@code text} (so no stored row has it). */
    private static boolean unstorable(String text) {
        return StorableText.unstorableAt(text) >= 0;
    }

    /**
     * Task counts per state across the whole store, every state present.
     *
     * @throws StateStoreException if the store failed
     */
    public Map<TaskStatus, Long> countByStatus() {
        Map<TaskStatus, Long> counts = new LinkedHashMap<>();
        Map<TaskStatus, Long> stored = store.countByStatus();
        for (TaskStatus s : TaskStatus.values()) {
            counts.put(s, stored.getOrDefault(s, 0L));
        }
        return counts;
    }

    /**
     * Task counts per workflow (every version) and state across the whole store, for operator
     * consoles: workflows in name order, every state present for each. Workflows with no task
     * are absent.
     *
     * @throws StateStoreException if the store failed
     */
    public Map<String, Map<TaskStatus, Long>> countByWorkflow() {
        Map<String, Map<TaskStatus, Long>> counts = new TreeMap<>();
        store.countByWorkflow().forEach((workflow, stored) -> {
            Map<TaskStatus, Long> row = new LinkedHashMap<>();
            for (TaskStatus s : TaskStatus.values()) {
                row.put(s, stored.getOrDefault(s, 0L));
            }
            counts.put(workflow, row);
        });
        return counts;
    }

    // ------------------------------------------------------------------ operator actions

    /**
     * Resubmits an {@code ERROR} task from its failed step (or continues compensating a
     * {@code COMPENSATION_FAILED} one), with its failure count reset.
     *
     * @throws NullPointerException if {@code taskId} is null
     * @throws TaskNotFoundException if there is no such task
     * @throws TaskStateException if the task is in another state
     * @throws StateStoreException if the store failed
     */
    public void resubmit(TaskId taskId) {
        resubmit(taskId, null);
    }

    /**
     * As {@link #resubmit(TaskId)}, recording who resubmitted the task and why in its
     * {@link TaskEvent.Type#RESUBMITTED} event.
     *
     * @param note who and why, or null
     * @throws NullPointerException if {@code taskId} is null
     * @throws TaskNotFoundException if there is no such task
     * @throws TaskStateException if the task is in another state
     * @throws StateStoreException if the store failed
     */
    public void resubmit(TaskId taskId, OperatorNote note) {
        Objects.requireNonNull(taskId, "taskId must not be null");
        TaskInfo info = (unstorable(taskId.value()) ? Optional.<TaskInfo>empty() : store.find(taskId))
                .orElseThrow(() -> new TaskNotFoundException(taskId));
        if (!resubmitted(info, note)) {
            TaskStatus actual = store.find(taskId).orElseThrow(() -> new TaskNotFoundException(taskId)).status();
            throw new TaskStateException("resubmit", taskId, actual, RESUBMITTABLE);
        }
    }

    /** Resubmits the task {@code info} shows, if it is still in a resubmittable state. */
    private boolean resubmitted(TaskInfo info, OperatorNote note) {
        Instant now = now();
        TaskEvent event = operatorEvent(info, TaskEvent.Type.RESUBMITTED, now, note);
        if (!store.resubmit(info.taskId(), now, event)) {
            return false;
        }
        log.info("task {} step {}: resubmitted by {}", info.taskId(), info.currentStep(),
                note == null ? "an operator" : note.operator());
        hooks.operatorAction(event);
        return true;
    }

    /**
     * Resubmits every {@code ERROR} task of {@code workflow} (every version), page by page. A task
     * that leaves ERROR meanwhile is skipped.
     *
     * @return how many tasks were resubmitted
     * @throws NullPointerException if {@code workflow} is null
     * @throws StateStoreException if the store failed; tasks resubmitted before stay resubmitted
     */
    public int resubmitAll(String workflow) {
        Objects.requireNonNull(workflow, "workflow must not be null");
        if (unstorable(workflow)) {
            return 0;
        }
        TaskQuery query = TaskQuery.all().withStatus(TaskStatus.ERROR).withWorkflow(workflow).withLimit(500);
        int resubmitted = 0;
        List<TaskInfo> page = store.list(query);
        while (!page.isEmpty()) {
            for (TaskInfo info : page) {
                if (resubmitted(info, null)) {
                    resubmitted++;
                }
            }
            page = page.size() < query.limit() ? List.of() : store.list(query.after(page.get(page.size() - 1)));
        }
        log.info("workflow {}: {} ERROR tasks resubmitted by an operator", workflow, resubmitted);
        return resubmitted;
    }

    /**
     * Cancels a task that has not finished. When this returns true the cancel is recorded and will
     * be carried out, whatever the task was doing: a scheduler compensates, in reverse order, its
     * completed steps and every step whose effect may have applied (one that timed out or ran out
     * of retries on errors that may be transient; not one that failed definitely, with a
     * {@link NonRetryableException}), then the task ends {@code CANCELLED}, or
     * {@code COMPENSATION_FAILED} if a compensation fails for good (a resubmit continues it).
     *
     * <ul>
     *   <li>A running step is allowed to finish first, and is then compensated, even when it is the
     *       last step: a cancel that arrives before the task is recorded {@code PROCESSED} wins, and
     *       one that arrives after is refused with false.</li>
     *   <li>A cancel that races the supervisor recovering an expired claim is honoured the same way.</li>
     *   <li>An {@code ERROR} task is made due so that a scheduler compensates it; its failed step
     *       is compensated when its effect may have applied.</li>
     *   <li>A {@code COMPENSATING} task goes on compensating and ends {@code CANCELLED}.</li>
     *   <li>A task that cannot run on the node that claims it (its input cannot be decoded, or it
     *       is at a step the registered version lacks) is parked in {@code ERROR} with the cancel
     *       still requested and an alert; once that is fixed, cancelling it again carries it out.</li>
     * </ul>
     *
     * @return true if the cancel was recorded; false if the task had already finished
     *     ({@code PROCESSED}, {@code COMPENSATED}, {@code CANCELLED}), is {@code COMPENSATION_FAILED}
     *     (resubmit it), or a cancel was already requested and is being carried out
     * @throws NullPointerException if {@code taskId} is null
     * @throws TaskNotFoundException if there is no such task
     * @throws StateStoreException if the store failed
     */
    public boolean cancel(TaskId taskId) {
        return cancel(taskId, null);
    }

    /**
     * As {@link #cancel(TaskId)}, recording who cancelled the task and why in its
     * {@link TaskEvent.Type#CANCEL_REQUESTED} event.
     *
     * @param note who and why, or null
     * @return true if the cancel was recorded (see {@link #cancel(TaskId)})
     * @throws NullPointerException if {@code taskId} is null
     * @throws TaskNotFoundException if there is no such task
     * @throws StateStoreException if the store failed
     */
    public boolean cancel(TaskId taskId, OperatorNote note) {
        Objects.requireNonNull(taskId, "taskId must not be null");
        TaskInfo info = (unstorable(taskId.value()) ? Optional.<TaskInfo>empty() : store.find(taskId))
                .orElseThrow(() -> new TaskNotFoundException(taskId));
        Instant now = now();
        TaskEvent event = operatorEvent(info, TaskEvent.Type.CANCEL_REQUESTED, now, note);
        boolean requested = store.requestCancel(taskId, now, event);
        if (requested) {
            log.info("task {} step {}: cancel requested by {}", taskId, info.currentStep(),
                    note == null ? "an operator" : note.operator());
            hooks.operatorAction(event);
        }
        return requested;
    }

    // ------------------------------------------------------------------ replies to awaiting steps

    /**
     * Completes the step attempt {@code replyToken} names with {@code reply} as its output: the
     * reply to a request a step sent with {@link StepBuilder#awaitReply(ReplyRequest)}. Works from
     * any node or process holding only a store (a webhook handler, a queue consumer). In one fenced
     * store transaction it checks that the task still awaits this very attempt (same step, same
     * lease) and that the store's time is before the step's deadline, then records the step as
     * completed exactly as a scheduler would (the next step becomes due, or the task
     * {@code PROCESSED}; events, reply channels, listeners and handles see it). A reply that arrives
     * while the request's send is still being recorded is kept and applied by that record.
     *
     * <p>The reply is encoded with the step's codec: a step defined by name takes a {@link String},
     * stored as is; a typed step ({@link TypedStepBuilder}) takes a value of its type. The client
     * must know the workflow (it submitted to it, was built with {@link Builder#workflow(Workflow)},
     * or is a runtime's client): it checks the step and decides the task's next state from it.
     * The token must be one the client's {@link ReplyTokenKeys} signed (current or previous key): a
     * forged, altered, truncated or malformed token answers {@link ReplyOutcome#INVALID_TOKEN} (logged
     * at WARN without the token; counted by a runtime's client, {@link SasMetrics#invalidReplyTokens()}).
     * A valid token naming a task that no longer exists answers {@link ReplyOutcome#NOT_FOUND}; a late
     * or stale reply is logged at INFO (never its payload) and counted by a runtime's client
     * ({@link SasMetrics#lateReplies()}).
     *
     * @param replyToken the token the request carried ({@link ReplyRequest#send})
     * @param reply the step's output, or null
     * @return what became of the reply; only {@link ReplyOutcome#COMPLETED} changed the task
     * @throws IllegalArgumentException if {@code replyToken} is null or blank, the step named does not await a
     *     reply, the workflow is unknown to this client for a non-string reply, or the reply cannot be
     *     encoded, is too large or unstorable
     * @throws IllegalStateException if the client has no {@link ReplyTokenKeys}
     *     ({@link Builder#replyTokenKeys})
     * @throws StateStoreException if the store failed; the reply may then have been recorded or not
     *     (sending it again is safe: a duplicate answers {@link ReplyOutcome#ALREADY_COMPLETED})
     */
    public ReplyOutcome completeStep(String replyToken, Object reply) {
        return reply(replyToken, (target, def) -> def.encodeReply(reply), dev.sas.core.spi.StepReply.Kind.COMPLETED);
    }

    /**
     * Completes the step attempt {@code replyToken} names with text already encoded with the step's
     * codec (for transports that carry the encoded reply); otherwise as
     * {@link #completeStep(String, Object)}. The text is decoded with the step's codec before it is
     * accepted, so a reply the next step could not read is refused here, not found by that step.
     *
     * @param replyToken the token the request carried
     * @param encodedReply the step's output as the step's codec encodes it, or null
     * @return what became of the reply
     * @throws IllegalArgumentException if {@code replyToken} is null or blank or names a step that does not
     *     await a reply, the workflow is unknown to this client, or the reply cannot be decoded by the
     *     step's codec (the message names the codec's exception; it is the cause), is too large or unstorable
     * @throws IllegalStateException if the client has no {@link ReplyTokenKeys}
     * @throws StateStoreException if the store failed
     */
    public ReplyOutcome completeStepEncoded(String replyToken, String encodedReply) {
        return reply(replyToken, (target, def) -> def.checkEncodedReply(encodedReply),
                dev.sas.core.spi.StepReply.Kind.COMPLETED);
    }

    /**
     * Records the step attempt {@code replyToken} names as failed with {@code error}: retried per
     * the step's {@link RetryPolicy} (the request is sent again, with the same idempotency key), or
     * the step fails when the policy is spent. Fenced and bounded like
     * {@link #completeStep(String, Object)}.
     *
     * @param replyToken the token the request carried
     * @param error what went wrong (stored as the task's last error)
     * @return what became of the failure; only {@link ReplyOutcome#FAILED} changed the task
     * @throws NullPointerException if {@code error} is null
     * @throws IllegalArgumentException if {@code replyToken} is null or blank or names a step that does not
     *     await a reply, or the workflow is unknown to this client
     * @throws IllegalStateException if the client has no {@link ReplyTokenKeys}
     * @throws StateStoreException if the store failed
     */
    public ReplyOutcome failStep(String replyToken, String error) {
        return failStep(replyToken, error, true);
    }

    /**
     * Records the step attempt {@code replyToken} names as failed with {@code error}, like
     * {@link #failStep(String, String)}; with {@code retryable} false the step fails for good at
     * once (as a {@link NonRetryableException} would), whatever its retry policy.
     *
     * @param replyToken the token the request carried
     * @param error what went wrong (stored as the task's last error)
     * @param retryable whether the step's retry policy may retry it
     * @return what became of the failure
     * @throws NullPointerException if {@code error} is null
     * @throws IllegalArgumentException if {@code replyToken} is null or blank or names a step that does not
     *     await a reply, or the workflow is unknown to this client
     * @throws IllegalStateException if the client has no {@link ReplyTokenKeys}
     * @throws StateStoreException if the store failed
     */
    public ReplyOutcome failStep(String replyToken, String error, boolean retryable) {
        Objects.requireNonNull(error, "error must not be null");
        String message = StorableText.replaceUnstorable(error.length() > MAX_REPLY_ERROR_LENGTH
                ? error.substring(0, MAX_REPLY_ERROR_LENGTH) + "…" : error);
        return reply(replyToken, (target, def) -> message, retryable ? dev.sas.core.spi.StepReply.Kind.FAILED
                : dev.sas.core.spi.StepReply.Kind.FAILED_FOR_GOOD);
    }

    /** Longest error a {@link #failStep} records, in chars (longer ones are cut). */
    private static final int MAX_REPLY_ERROR_LENGTH = 2000;

    /** Encodes a reply for the awaiting step it answers. */
    private interface ReplyPayload {
        String encode(TaskInfo task, StepDefinition<?> step);
    }

    private ReplyOutcome reply(String replyToken, ReplyPayload payload, dev.sas.core.spi.StepReply.Kind kind) {
        if (replyToken == null || replyToken.isBlank()) {
            throw new IllegalArgumentException("replyToken must not be " + (replyToken == null ? "null" : "blank")
                    + ": pass the token the step's ReplyRequest.send was given, unchanged");
        }
        dev.sas.core.internal.ReplyTokens.Checked checked = replyTokens.check(replyToken);
        if (!checked.accepted()) {
            log.warn("a reply was refused: its token is {}; nothing changed", checked.refusal());
            hooks.replyRejected(ReplyOutcome.INVALID_TOKEN);
            return ReplyOutcome.INVALID_TOKEN;
        }
        dev.sas.core.internal.ReplyToken token = checked.token();
        if (checked.unsigned()) {
            log.warn("task {} step {}: a reply with an unsigned (format 1) token was accepted"
                    + " (ReplyTokenKeys.acceptUnsignedTokens()); turn that off once the upgrade's awaiting steps are"
                    + " answered", token.taskId(), token.step());
        }
        if (unstorable(token.taskId().value())) {
            return ReplyOutcome.NOT_FOUND; // no store holds such an id; PostgreSQL would throw on a NUL
        }
        TaskInfo info = store.find(token.taskId()).orElse(null);
        if (info == null) {
            return ReplyOutcome.NOT_FOUND;
        }
        Workflow<?> wf = known.get(info.workflow() + '#' + info.workflowVersion());
        if (wf == null) {
            throw new IllegalArgumentException("the reply token names task " + token.taskId() + " of workflow '"
                    + info.workflow() + "' version " + info.workflowVersion() + ", which this client does not know;"
                    + " build the client with SasClient.builder().workflow(...) (or use a runtime's client) so it"
                    + " can encode the reply and decide the step's next state");
        }
        if (token.step() >= wf.steps().size()) {
            return ReplyOutcome.NOT_FOUND;
        }
        StepDefinition<?> def = wf.steps().get(token.step());
        if (!def.awaitsReply()) {
            throw new IllegalArgumentException("the reply token names step '" + def.name() + "' of workflow '"
                    + wf.name() + "', which does not await a reply (define it with awaitReply(...)); pass the token a"
                    + " ReplyRequest was given");
        }
        String encoded = payload.encode(info, def);
        String what = "reply to step '" + def.name() + "' of task " + token.taskId();
        int bytes = payloadLimit.excess(encoded);
        if (bytes >= 0) {
            throw new IllegalArgumentException(payloadLimit.message(what, bytes));
        }
        String unstorable = StorableText.problem(what, encoded);
        if (unstorable != null) {
            throw new IllegalArgumentException(unstorable + "; no database can store it: have the step's codec escape"
                    + " or encode it (JSON, base64)");
        }
        Instant now = now();
        dev.sas.core.spi.StepReply reply = new dev.sas.core.spi.StepReply(token.taskId(), token.step(), token.lease(),
                kind, encoded, now);
        java.util.concurrent.atomic.AtomicReference<dev.sas.core.internal.StepReplies.Decided> decided =
                new java.util.concurrent.atomic.AtomicReference<>();
        dev.sas.core.spi.ReplyWrite w = store.acceptReply(reply, target -> {
            dev.sas.core.internal.StepReplies.Decided d = dev.sas.core.internal.StepReplies.decide(target, wf, reply);
            decided.set(d);
            return d.transition();
        }, now);
        ReplyOutcome outcome = switch (w.kind()) {
            case APPLIED, KEPT -> kind == dev.sas.core.spi.StepReply.Kind.COMPLETED ? ReplyOutcome.COMPLETED
                    : ReplyOutcome.FAILED;
            case DUPLICATE -> ReplyOutcome.ALREADY_COMPLETED;
            case LATE -> ReplyOutcome.LATE;
            case STALE, REFUSED -> ReplyOutcome.STALE;
            case NOT_FOUND -> ReplyOutcome.NOT_FOUND;
        };
        dev.sas.core.internal.TaskLog.run(token.taskId(), wf.name(), token.step(), 0, () -> logReply(token, def,
                w, outcome));
        if (w.kind() == dev.sas.core.spi.ReplyWrite.Kind.APPLIED) {
            hooks.replied(w.transition(), decided.get() == null ? List.of() : decided.get().alerts());
            if (w.transition().status().isTerminal()) {
                waiters.finished(token.taskId());
            }
        } else if (outcome == ReplyOutcome.LATE || outcome == ReplyOutcome.STALE) {
            hooks.replyRejected(outcome);
        }
        return outcome;
    }

    private static void logReply(dev.sas.core.internal.ReplyToken token, StepDefinition<?> def,
            dev.sas.core.spi.ReplyWrite w, ReplyOutcome outcome) {
        switch (w.kind()) {
            case APPLIED -> log.info("task {} step {}: reply accepted ({}); task now {}", token.taskId(), def.name(),
                    outcome, w.transition().status());
            case KEPT -> log.info("task {} step {}: reply accepted ({}) while its request is being sent; applied"
                    + " when that is recorded", token.taskId(), def.name(), outcome);
            case DUPLICATE -> log.info("task {} step {}: duplicate reply to attempt with lease {} ignored",
                    token.taskId(), def.name(), token.lease());
            case LATE -> log.info("task {} step {}: late reply rejected: it came after the attempt's deadline",
                    token.taskId(), def.name());
            case STALE -> log.info("task {} step {}: stale reply rejected: the task no longer awaits the attempt with"
                    + " lease {}", token.taskId(), def.name(), token.lease());
            case REFUSED -> log.warn("task {} step {}: the store refused to record the reply", token.taskId(),
                    def.name());
            case NOT_FOUND -> log.info("task {}: reply for a task that no longer exists ignored", token.taskId());
        }
    }

    // ------------------------------------------------------------------ agents

    /**
     * The shared flow-control state of every agent endpoint that has been called through a limit
     * or a circuit breaker: breaker state (and until when it is open), calls in flight across the
     * cluster, failures counted. Ordered by agent, then endpoint.
     *
     * @throws UnsupportedOperationException if the store does not support flow control
     * @throws StateStoreException if the store failed
     */
    public List<AgentStatus> agents() {
        return AgentGates.statuses(store, now());
    }

    /**
     * Closes the circuit breakers of every endpoint of {@code agent} and clears their counters, as
     * an operator does once a service is known to be back: calls go through at once, and tasks
     * waiting for the breaker go on when they next come due (at the latest when the cool-down they
     * were told would have ended). Logged at INFO.
     *
     * @return how many endpoints were reset (0 if the agent's gates were never written)
     * @throws NullPointerException if {@code agent} is null
     * @throws UnsupportedOperationException if the store does not support flow control
     * @throws StateStoreException if the store failed
     */
    public int resetCircuitBreaker(String agent) {
        Objects.requireNonNull(agent, "agent must not be null");
        return AgentGates.reset(store, agent, null, now());
    }

    /**
     * Closes the circuit breaker of one endpoint of {@code agent} and clears its counters; see
     * {@link #resetCircuitBreaker(String)}.
     *
     * @return true if the endpoint's gate existed and was reset
     * @throws NullPointerException if an argument is null
     * @throws UnsupportedOperationException if the store does not support flow control
     * @throws StateStoreException if the store failed
     */
    public boolean resetCircuitBreaker(String agent, String endpoint) {
        Objects.requireNonNull(agent, "agent must not be null");
        Objects.requireNonNull(endpoint, "endpoint must not be null");
        return AgentGates.reset(store, agent, endpoint, now()) > 0;
    }

    /** The store's time, by the local clock and its offset (measured again when old). */
    private Instant now() {
        clock.ensureFresh();
        return clock.instant();
    }

    private static TaskEvent operatorEvent(TaskInfo info, TaskEvent.Type type, Instant at, OperatorNote note) {
        return new TaskEvent(info.taskId(), info.businessKey(), info.workflow(), type, info.currentStep(), null, 0, at,
                note == null ? null : note.describe());
    }

    @Override
    public String toString() {
        return "SasClient{store=" + store + '}';
    }

    /**
     * Builds a {@link SasClient}. Not thread-safe; {@link #build()} copies, so reusing the builder
     * never changes a client already built.
     */
    public static final class Builder {
        private StateStore store;
        private Clock clock = Clock.systemUTC();
        private boolean databaseClock = true;
        private int maxPayloadBytes = DEFAULT_MAX_PAYLOAD_BYTES;
        private final List<Workflow<?>> workflows = new ArrayList<>();
        private Tracing tracing = Tracing.none();
        private ReplyTokenKeys replyTokenKeys;

        private Builder() {
        }

        /**
         * The keys that check the tokens of replies to awaiting steps ({@link SasClient#completeStep},
         * {@link SasClient#failStep}): the same keys the runtimes that sent the requests sign with
         * ({@link RuntimeBuilder#replyTokenKeys}). Required to complete steps; a client that does
         * not complete steps needs none.
         *
         * @throws NullPointerException if null
         */
        public Builder replyTokenKeys(ReplyTokenKeys keys) {
            this.replyTokenKeys = Objects.requireNonNull(keys, "replyTokenKeys must not be null");
            return this;
        }

        /**
         * Where tasks live. Required.
         *
         * @throws NullPointerException if null
         */
        public Builder stateStore(StateStore store) {
            this.store = Objects.requireNonNull(store, "stateStore must not be null");
            return this;
        }

        /**
         * This node's clock. Default: the system UTC clock. Submission and due times are this clock
         * moved by its measured offset to the store's clock, so a delayed task is due when the
         * store's clock says so, whatever this node's clock shows (see
         * {@link RuntimeBuilder#clock(Clock)}).
         *
         * @throws NullPointerException if null
         */
        public Builder clock(Clock clock) {
            this.clock = Objects.requireNonNull(clock, "clock must not be null");
            return this;
        }

        /**
         * Makes {@link #clock(Clock)} the authority: the store's clock is never read. For tests with
         * a manual clock; see {@link RuntimeBuilder#trustLocalClock()}.
         */
        public Builder trustLocalClock() {
            this.databaseClock = false;
            return this;
        }

        /**
         * Largest encoded input, in UTF-8 bytes. Default {@value SasClient#DEFAULT_MAX_PAYLOAD_BYTES}.
         *
         * @throws IllegalArgumentException if less than 1
         */
        public Builder maxPayloadBytes(int bytes) {
            if (bytes < 1) {
                throw new IllegalArgumentException("maxPayloadBytes must be at least 1, was " + bytes);
            }
            this.maxPayloadBytes = bytes;
            return this;
        }

        /**
         * A workflow this client shows in full: {@link SasClient#find(TaskId)} then lists the steps
         * a task has not started yet too. Optional; workflows passed to {@code submit} are known anyway.
         *
         * @throws NullPointerException if null
         */
        public Builder workflow(Workflow<?> workflow) {
            workflows.add(Objects.requireNonNull(workflow, "workflow must not be null"));
            return this;
        }

        /**
         * Stores each submitter's trace context with its task, so the steps continue its trace
         * (e.g. {@code OpenTelemetryTracing} from {@code sas-opentelemetry}). Default
         * {@link Tracing#none()}.
         *
         * @throws NullPointerException if null
         */
        public Builder tracing(Tracing tracing) {
            this.tracing = Objects.requireNonNull(tracing, "tracing must not be null");
            return this;
        }

        /**
         * The client.
         *
         * @throws IllegalStateException if no state store was given
         */
        public SasClient build() {
            if (store == null) {
                throw new IllegalStateException("stateStore is required: call stateStore(...) before build()");
            }
            return new SasClient(new Config(store, clock, databaseClock, maxPayloadBytes, tracing, replyTokenKeys),
                    DatabaseClock.of(clock, store, databaseClock, "client", millis -> { }), List.copyOf(workflows),
                    ClientHooks.NONE);
        }
    }
}
