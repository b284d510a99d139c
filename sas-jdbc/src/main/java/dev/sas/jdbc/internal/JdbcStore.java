package dev.sas.jdbc.internal;

import dev.sas.core.StateStoreException;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.TaskInfo;
import dev.sas.core.TaskQuery;
import dev.sas.core.TaskStatus;
import dev.sas.core.spi.ClaimedSubmits;
import dev.sas.core.spi.ClaimedTask;
import dev.sas.core.spi.DeploymentStore;
import dev.sas.core.spi.ExpiredTask;
import dev.sas.core.spi.FlowControlStore;
import dev.sas.core.spi.NewTask;
import dev.sas.core.spi.StatusOutbox;
import dev.sas.core.spi.StoreSignals;
import dev.sas.core.spi.StateStore;
import dev.sas.core.spi.StepCompletionStore;
import dev.sas.core.spi.SubmitResult;
import dev.sas.core.spi.Transition;
import dev.sas.core.spi.WorkflowVersion;
import dev.sas.core.spi.WriteOutcome;
import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.core.spi.JdbiPlugin;
import org.jdbi.v3.core.statement.TemplateEngine;

/**
 * The store's one façade: {@code JdbcStateStore} is this class plus its configuration (builder,
 * pool, host transactions). The semantics of {@code InMemoryStateStore}, in SQL that is the same
 * on every database except where {@link Dialect} says otherwise, held in one class per concern: {@link Submits} (with {@link HostTransactions}), {@link Claims},
 * {@link TransitionWriter}, {@link SupervisorQueries}, {@link ReadQueries},
 * {@link OperatorActions}, {@link Retention}, {@link Parking} and {@link Gates}; {@link StoreContext} says which of them use
 * plain JDBC and why. Thread-safe. Not API.
 */
public class JdbcStore implements StateStore {

    /** Configures a Jdbi the way the store's SQL expects (positional parameters, no templating). */
    public static final JdbiPlugin PLUGIN = new JdbiPlugin() {
        @Override
        public void customizeJdbi(Jdbi j) {
            j.setTemplateEngine(TemplateEngine.NOP);
        }
    };

    private final StoreContext db;
    private final Dialect dialect;
    private final Submits submits;
    private final Claims claims;
    private final DeadlineRenewals renewals;
    private final RuntimeWorkflows runtimeWorkflows;
    private final TransitionWriter writer;
    private final SupervisorQueries supervisor;
    private final ReadQueries reads;
    private final OperatorActions operator;
    private final Retention retention;
    private final JdbcStatusOutbox statusOutbox;
    private final PgSignals signals;
    private final StepCompletionRows stepCompletions;
    private final Gates gates;
    private final JdbcSchedules schedules;
    private final VersionMoveWriter moves;

    /** A store on {@code jdbi}, whose schema is already in place. */
    public JdbcStore(Jdbi jdbi, Dialect dialect, Tables tables) {
        this(jdbi, dialect, tables, () -> { });
    }

    /**
     * A store on {@code jdbi}, whose schema is already in place.
     *
     * @param onReadOnly run when the database answers that it takes no writes (a primary demoted in
     *     a failover): the store's own pool drops its connections so that new ones find the new primary
     */
    public JdbcStore(Jdbi jdbi, Dialect dialect, Tables tables, Runnable onReadOnly) {
        this.db = new StoreContext(jdbi, dialect, tables, onReadOnly);
        this.dialect = dialect;
        PendingStarts pendingStarts = new PendingStarts();
        this.submits = new Submits(db, pendingStarts);
        this.claims = new Claims(db, pendingStarts);
        this.renewals = new DeadlineRenewals(db);
        this.runtimeWorkflows = new RuntimeWorkflows(db, new Parking(db));
        this.writer = new TransitionWriter(db, pendingStarts);
        this.stepCompletions = new StepCompletionRows(db, writer);
        this.supervisor = new SupervisorQueries(db);
        this.reads = new ReadQueries(db);
        this.operator = new OperatorActions(db);
        this.retention = new Retention(db);
        this.gates = new Gates(db);
        this.statusOutbox = new JdbcStatusOutbox(db);
        this.schedules = new JdbcSchedules(db);
        this.moves = new VersionMoveWriter(db);
        this.signals = dialect.signals(db);
    }

    /**
     * {@inheritDoc}
     *
     * <p>Tables {@code <prefix>reply_outbox} (messages not yet delivered) and
     * {@code <prefix>reply_channel} (registered channels, their consumer's lease and position).
     */
    @Override
    public Optional<StatusOutbox> statusOutbox() {
        return Optional.of(statusOutbox);
    }

    /** {@inheritDoc} Table {@code <prefix>schedule} (schema V16). */
    @Override
    public Optional<dev.sas.core.spi.ScheduleStore> schedules() {
        return Optional.of(schedules);
    }

    /** {@inheritDoc} Table {@code <prefix>runtime_workflow} holds the advertisements. */
    @Override
    public Optional<DeploymentStore> deployments() {
        return Optional.of(runtimeWorkflows);
    }

    /** {@inheritDoc} Completions are kept in table {@code <prefix>step_reply} until their task is purged. */
    @Override
    public Optional<StepCompletionStore> stepCompletions() {
        return Optional.of(stepCompletions);
    }

    /** {@inheritDoc} Under the task's row lock, with its step rows re-indexed in the same transaction. */
    @Override
    public Optional<dev.sas.core.spi.VersionMoves> versionMoves() {
        return Optional.of(moves);
    }

    /** {@inheritDoc} Tables {@code <prefix>agent_gate} and {@code <prefix>agent_permit} (schema V7). */
    @Override
    public Optional<FlowControlStore> flowControl() {
        return Optional.of(gates);
    }

    /**
     * {@inheritDoc}
     *
     * <p>On PostgreSQL, {@code LISTEN/NOTIFY}: the schema's triggers send a hint with the commit of a
     * submit, of a task made due again, of the end of a task some node awaits, and of new reply
     * messages; from the first subscription on, the store holds one connection of its pool to listen
     * (thread {@code sas-pg-listen}). Empty on H2 and MariaDB.
     */
    @Override
    public Optional<StoreSignals> signals() {
        return Optional.ofNullable(signals);
    }

    /** Stops listening for wake-up hints, if it did. */
    @Override
    public void close() {
        if (signals != null) {
            signals.close();
        }
    }

    /** The dialect in use. */
    public Dialect dialect() {
        return dialect;
    }

    /**
     * {@inheritDoc}
     *
     * <p>The database's clock ({@code clock_timestamp()} on PostgreSQL, {@code SYSDATE(6)} on
     * MariaDB, {@code CURRENT_TIMESTAMP} on H2, embedded or server): never empty. Embedded H2's
     * clock is this JVM's system clock, not the {@code Clock} a runtime was given, so runtimes on
     * one embedded database agree on time as runtimes on a server do. Tests that drive time with a
     * manual clock against this store say so with {@code trustLocalClock()}. Read in a statement of its
     * own, never in a host's transaction.
     */
    @Override
    public Optional<Instant> currentTime() {
        BigDecimal seconds = db.run("reading the database clock", null,
                () -> db.jdbi().withHandle(h -> h.createQuery(dialect.currentEpochSecondsSql())
                        .mapTo(BigDecimal.class).one()));
        return Optional.of(Instant.ofEpochSecond(0, seconds.movePointRight(9).longValue()));
    }

    /** True if the database rolled the transaction back as a deadlock victim or serialization failure. */
    static boolean isDeadlock(Throwable e) {
        return Claims.isDeadlock(e);
    }

    /**
     * {@inheritDoc}
     *
     * <p>{@code transaction} may be null (the store commits on its own), a {@link java.sql.Connection}
     * or an {@link org.jdbi.v3.core.Handle}: the task and its event are then written on that
     * connection and commit or roll back with the host's transaction; the store neither commits
     * nor closes it. A connection in auto-commit mode gets a short transaction of its own.
     *
     * <p>The store sets no limit on the input's size (the runtime's {@code maxPayloadBytes} does);
     * an input the database's column cannot hold fails with a {@link StateStoreException} naming
     * the task.
     *
     * @throws IllegalArgumentException if {@code transaction} is of another type, a text field is
     *     longer than its column, or the task id exists
     * @throws StateStoreException if the database fails
     */
    @Override
    public SubmitResult submit(NewTask task, TaskEvent received, Object transaction) {
        return submits.submit(task, received, transaction);
    }

    /**
     * {@inheritDoc}
     *
     * <p>Tasks are inserted up to 1,000 per statement (fewer when their inputs are large), in one
     * transaction; {@code transaction} is joined as in {@link #submit}.
     *
     * @throws NullPointerException if a list or an element is null
     * @throws IllegalArgumentException if the lists differ in size, {@code transaction} is of
     *     another type, a text field is longer than its column, or a task id appears twice or exists
     * @throws StateStoreException if the database fails; then no task of the batch was written
     *     (in a host transaction: the host must roll back)
     */
    @Override
    public List<SubmitResult> submitAll(List<NewTask> tasks, List<TaskEvent> received, Object transaction) {
        return submits.submitAll(tasks, received, transaction);
    }

    /** {@inheritDoc} The task is inserted already claimed, in the submit's one transaction. */
    @Override
    public Optional<ClaimedSubmits> claimedSubmits() {
        return Optional.of(submits::submitClaimed);
    }

    /**
     * {@inheritDoc}
     *
     * @throws StateStoreException if the database fails; then nothing was claimed
     */
    @Override
    public List<ClaimedTask> claim(String instanceId, int limit, Instant now, Set<WorkflowVersion> runnable) {
        return claims.claim(instanceId, limit, now, runnable);
    }

    /** @throws StateStoreException if the database fails */
    @Override
    public List<dev.sas.core.spi.DeadlineRenewal.Outcome> renewDeadlines(
            List<dev.sas.core.spi.DeadlineRenewal> renewals, Instant now) {
        return this.renewals.renew(renewals, now);
    }

    /**
     * {@inheritDoc}
     *
     * <p>All transitions are written in one transaction with batched statements. If the database
     * refuses a value with a data error (SQLState class 22), they are written again one per
     * transaction, so only the transition holding it is {@linkplain WriteOutcome#refused refused}.
     *
     * @throws StateStoreException if the database fails; then none of them was written, except,
     *     after a data error, those already written one by one (a retry finds them
     *     {@code APPLIED_ALREADY})
     */
    @Override
    public List<WriteOutcome> write(List<Transition> transitions, Instant now) {
        return writer.write(transitions, now);
    }

    /** @throws StateStoreException if the database fails */
    @Override
    public List<ExpiredTask> findExpired(Instant now, int limit) {
        return supervisor.findExpired(now, limit);
    }

    /** @throws StateStoreException if the database fails */
    @Override
    public boolean tryAcquireSupervisorLease(String instanceId, Instant now, Duration ttl) {
        return supervisor.tryAcquireSupervisorLease(instanceId, now, ttl);
    }

    /** @throws StateStoreException if the database fails */
    @Override
    public void releaseSupervisorLease(String instanceId) {
        supervisor.releaseSupervisorLease(instanceId);
    }

    /** @throws StateStoreException if the database fails */
    @Override
    public Optional<TaskInfo> find(TaskId taskId) {
        return reads.find(taskId);
    }

    /** @throws StateStoreException if the database fails */
    @Override
    public Optional<TaskId> findByBusinessKey(String workflow, String businessKey) {
        return reads.findByBusinessKey(workflow, businessKey);
    }

    /** @throws StateStoreException if the database fails */
    @Override
    public List<TaskInfo> list(TaskQuery query) {
        return reads.list(query);
    }

    /** @throws StateStoreException if the database fails */
    @Override
    public Map<TaskStatus, Long> countByStatus() {
        return reads.countByStatus();
    }

    /**
     * {@inheritDoc}
     *
     * <p>One grouped query ({@code GROUP BY workflow, state}).
     *
     * @throws StateStoreException if the database fails
     */
    @Override
    public Map<String, Map<TaskStatus, Long>> countByWorkflow() {
        return reads.countByWorkflow();
    }

    /** @throws StateStoreException if the database fails */
    @Override
    public List<TaskEvent> events(TaskId taskId) {
        return reads.events(taskId);
    }

    /** @throws StateStoreException if the database fails */
    @Override
    public boolean resubmit(TaskId taskId, Instant now, TaskEvent event) {
        return operator.resubmit(taskId, now, event);
    }

    /** @throws StateStoreException if the database fails */
    @Override
    public boolean requestCancel(TaskId taskId, Instant now, TaskEvent event) {
        return operator.requestCancel(taskId, now, event);
    }

    /**
     * {@inheritDoc}
     *
     * <p>Deletes in transactions of at most 100 tasks, so a large purge never holds many locks.
     *
     * @throws StateStoreException if the database fails; chunks already deleted stay deleted
     */
    @Override
    public int purge(Instant finishedBefore, int limit) {
        return retention.purge(finishedBefore, limit);
    }
}
