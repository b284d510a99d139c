package dev.sas.core;

import dev.sas.core.internal.DatabaseClock;
import dev.sas.core.internal.Waiters;
import dev.sas.core.spi.StateStore;
import dev.sas.core.spi.SubmitResult;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;

/**
 * What any tier holds to work with tasks: submit them, find, list and count them, and wait for
 * their result. It starts no threads and needs no running scheduler in this process: tasks run on
 * whichever {@link SasRuntime} (in this JVM or another) shares the store. A web tier holds only
 * this. The other roles share its settings: {@link #operations()} (cancel, resubmit, agents) and
 * {@link #stepCompletion()} (complete steps that await completion from outside).
 *
 * <pre>{@code
 * SasClient client = SasClient.builder().stateStore(store).build();
 * TaskHandle order = client.submit(orders, "order-42", new Order(...));
 * TaskResult result = order.await(Duration.ofSeconds(30));
 * client.operations().cancel(order.taskId());
 * }</pre>
 *
 * <p>Thread-safe. Holds nothing to close: the store is the caller's.
 */
public final class SasClient {
    /** Default largest encoded input or step output: 1 MiB. */
    public static final int DEFAULT_MAX_PAYLOAD_BYTES = 1024 * 1024;
    /** Longest business key. */
    public static final int MAX_BUSINESS_KEY_LENGTH = 200;

    private final ClientCore core;
    private final StateStore store;
    private final Submissions submissions;
    private final OperationsClient operations;
    private final StepCompletionClient stepCompletion;
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
     * @param completionTokenKeys the keys that sign and check reply tokens, or null if none were given (then
     *     {@link StepCompletionClient} throws)
     */
    public record Config(StateStore stateStore, Clock clock, boolean databaseClock, int maxPayloadBytes,
            Tracing tracing, CompletionTokenKeys completionTokenKeys) {

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
        this.core = new ClientCore(config, clock, workflows, hooks);
        this.store = config.stateStore();
        this.submissions = new Submissions(core);
        this.operations = new OperationsClient(core);
        this.stepCompletion = new StepCompletionClient(core);
        this.schedules = new SasSchedules(this, store, core.clock(), core.payloadLimit, core.hooks);
    }

    /** The store's time, as every deadline is compared. */
    Instant now() {
        return core.now();
    }

    /** The threads of this client waiting for tasks, and what wakes them. */
    Waiters waiters() {
        return core.waiters;
    }

    /** A new builder. Not thread-safe. */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * The shared settings this client was built with, to build a runtime or a status consumer
     * with the same ones ({@link RuntimeBuilder#settings}, {@link StatusConsumer.Builder#settings}).
     */
    public SasSettings settings() {
        Config c = core.config;
        return new SasSettings(c.stateStore(), c.clock(), c.databaseClock(), c.maxPayloadBytes(), c.tracing(),
                c.completionTokenKeys());
    }

    /** The settings this client was built with. */
    public Config config() {
        return core.config;
    }

    /** The store's recurring schedules: register, list, pause, resume, trigger ({@link Schedule}). */
    public SasSchedules schedules() {
        return schedules;
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
     *     larger than {@code maxPayloadBytes}, or the options name a status channel that no node has
     *     registered ({@link RuntimeBuilder#statusChannel(StatusChannel)}, {@link StatusConsumer})
     * @throws StateStoreException if the store failed; the task may then not exist
     */
    public <I> TaskHandle submit(Workflow<I> workflow, String businessKey, I input, SubmitOptions options) {
        return handle(submissions.submit(workflow, businessKey, input, options));
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
        List<SubmitResult> results = submissions.submitAll(workflow, inputsByBusinessKey, options);
        List<TaskHandle> handles = new ArrayList<>(results.size());
        for (SubmitResult r : results) {
            handles.add(handle(r));
        }
        return handles;
    }

    private TaskHandle handle(SubmitResult result) {
        return new TaskHandle(this, result.taskId(), result.created());
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
     * the lookups, {@link #events}, {@link #list}, {@link OperationsClient#cancel} and
     * {@link OperationsClient#resubmit} answer it as not found without asking the store
     * (PostgreSQL's driver would throw on it).
     *
     * @throws NullPointerException if {@code taskId} is null
     * @throws StateStoreException if the store failed
     */
    public Optional<TaskInfo> find(TaskId taskId) {
        Objects.requireNonNull(taskId, "taskId must not be null");
        if (ClientCore.unstorable(taskId.value())) {
            return Optional.empty();
        }
        return store.find(taskId).map(info -> StatusView.withAllSteps(info,
                core.workflow(info.workflow(), info.workflowVersion())));
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
        if (ClientCore.unstorable(workflow) || ClientCore.unstorable(businessKey)) {
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
        return ClientCore.unstorable(taskId.value()) ? List.of() : store.events(taskId);
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
        if (ClientCore.unstorable(query.workflow())
                || (query.afterTaskId() != null && ClientCore.unstorable(query.afterTaskId().value()))) {
            return List.of();
        }
        return store.list(query);
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

    // ------------------------------------------------------------------ the other roles

    /**
     * Operator actions on the same store: cancel, resubmit (with an {@link OperatorNote}), the
     * agents' flow-control state and circuit breakers.
     */
    public OperationsClient operations() {
        return operations;
    }

    /**
     * Completes steps that await completion from outside ({@link StepBuilder#awaitCompletion(CompletionRequest)})
     * by the token their request carried. Needs this client's {@link Builder#completionTokenKeys}.
     */
    public StepCompletionClient stepCompletion() {
        return stepCompletion;
    }

    @Override
    public String toString() {
        return "SasClient{store=" + store + '}';
    }

    /**
     * Builds a {@link SasClient}. Not thread-safe; {@link #build()} copies, so reusing the builder
     * never changes a client already built.
     */
    public static final class Builder extends SharedSettingsBuilder<Builder> {
        private final List<Workflow<?>> workflows = new ArrayList<>();

        private Builder() {
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
         * The client.
         *
         * @throws IllegalStateException if no state store was given
         */
        public SasClient build() {
            if (store == null) {
                throw new IllegalStateException("stateStore is required: call stateStore(...) before build()");
            }
            return new SasClient(new Config(store, clock, databaseClock, maxPayloadBytes, tracing, completionTokenKeys),
                    DatabaseClock.of(clock, store, databaseClock, "client", millis -> { }), List.copyOf(workflows),
                    ClientHooks.NONE);
        }
    }
}
