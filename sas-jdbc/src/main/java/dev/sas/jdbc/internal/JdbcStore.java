package dev.sas.jdbc.internal;

import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.TaskInfo;
import dev.sas.core.TaskQuery;
import dev.sas.core.TaskStatus;
import dev.sas.core.spi.ClaimedTask;
import dev.sas.core.spi.DueBacklog;
import dev.sas.core.spi.ExpiredTask;
import dev.sas.core.spi.GateChange;
import dev.sas.core.spi.GateView;
import dev.sas.core.spi.NewTask;
import dev.sas.core.spi.RecordedEvent;
import dev.sas.core.spi.ReplyOutbox;
import dev.sas.core.spi.StoreSignals;
import dev.sas.core.spi.StateStore;
import dev.sas.core.spi.StepKey;
import dev.sas.core.spi.SubmitResult;
import dev.sas.core.spi.Transition;
import dev.sas.core.spi.WorkflowVersion;
import dev.sas.core.spi.WriteOutcome;
import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.core.spi.JdbiPlugin;
import org.jdbi.v3.core.statement.TemplateEngine;

/**
 * The SQL behind {@code JdbcStateStore}: the semantics of {@code InMemoryStateStore}, in SQL that
 * is the same on every database except where {@link Dialect} says otherwise. A facade over one
 * class per concern: {@link Submits} (with {@link HostTransactions}), {@link Claims},
 * {@link TransitionWriter}, {@link SupervisorQueries}, {@link ReadQueries},
 * {@link OperatorActions}, {@link Retention}, {@link Parking} and {@link Gates}; {@link StoreContext} says which of them use
 * plain JDBC and why. Thread-safe. Not API.
 */
public final class JdbcStore implements StateStore {

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
    private final Parking parking;
    private final Replies replies;
    private final PgSignals signals;
    private final StepReplies stepReplies;
    private final Gates gates;
    private final JdbcSchedules schedules;

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
        this.runtimeWorkflows = new RuntimeWorkflows(db);
        this.writer = new TransitionWriter(db, pendingStarts);
        this.stepReplies = new StepReplies(db, writer);
        this.supervisor = new SupervisorQueries(db);
        this.reads = new ReadQueries(db);
        this.operator = new OperatorActions(db);
        this.retention = new Retention(db);
        this.parking = new Parking(db);
        this.gates = new Gates(db);
        this.replies = new Replies(db);
        this.schedules = new JdbcSchedules(db);
        this.signals = dialect.signals(db);
    }

    @Override
    public Optional<ReplyOutbox> replyOutbox() {
        return Optional.of(replies);
    }

    @Override
    public Optional<dev.sas.core.spi.ScheduleStore> schedules() {
        return Optional.of(schedules);
    }

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
     * The database's clock, read in a statement of its own (never in a host's transaction): on every
     * database, embedded H2 included (its engine's clock is this JVM's system clock, not a runtime's
     * injected {@code Clock}), so that runtimes sharing the database agree on time.
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

    @Override
    public SubmitResult submit(NewTask task, TaskEvent received, Object transaction) {
        return submits.submit(task, received, transaction);
    }

    @Override
    public List<SubmitResult> submitAll(List<NewTask> tasks, List<TaskEvent> received, Object transaction) {
        return submits.submitAll(tasks, received, transaction);
    }

    @Override
    public boolean claimsAtSubmit() {
        return true;
    }

    @Override
    public SubmitResult submitClaimed(NewTask task, TaskEvent received, String instanceId) {
        return submits.submitClaimed(task, received, instanceId);
    }

    @Override
    public List<ClaimedTask> claim(String instanceId, int limit, Instant now, Set<WorkflowVersion> runnable) {
        return claims.claim(instanceId, limit, now, runnable);
    }

    @Override
    public List<dev.sas.core.spi.DeadlineRenewal.Outcome> renewDeadlines(
            List<dev.sas.core.spi.DeadlineRenewal> renewals, Instant now) {
        return this.renewals.renew(renewals, now);
    }

    @Override
    public List<WriteOutcome> write(List<Transition> transitions, Instant now) {
        return writer.write(transitions, now);
    }

    @Override
    public dev.sas.core.spi.AwaitWrite awaitReply(Transition awaiting,
            Function<dev.sas.core.spi.StepReply, Transition> ifReplied, Instant now) {
        return stepReplies.awaitReply(awaiting, ifReplied, now);
    }

    @Override
    public dev.sas.core.spi.ReplyWrite acceptReply(dev.sas.core.spi.StepReply reply,
            Function<dev.sas.core.spi.ReplyTarget, Transition> decide, Instant now) {
        return stepReplies.acceptReply(reply, decide, now);
    }

    @Override
    public List<ExpiredTask> findExpired(Instant now, int limit) {
        return supervisor.findExpired(now, limit);
    }

    @Override
    public boolean tryAcquireSupervisorLease(String instanceId, Instant now, Duration ttl) {
        return supervisor.tryAcquireSupervisorLease(instanceId, now, ttl);
    }

    @Override
    public void releaseSupervisorLease(String instanceId) {
        supervisor.releaseSupervisorLease(instanceId);
    }

    @Override
    public void advertise(String instanceId, Set<WorkflowVersion> runnable, Instant now, Duration ttl) {
        runtimeWorkflows.advertise(instanceId, runnable, now, ttl);
    }

    @Override
    public Set<WorkflowVersion> runnableByLiveNodes(Instant now) {
        return runtimeWorkflows.runnableByLiveNodes(now);
    }

    @Override
    public List<DueBacklog> dueBacklog(Instant dueBefore, int limit) {
        return runtimeWorkflows.dueBacklog(dueBefore, limit);
    }

    @Override
    public List<RecordedEvent> park(WorkflowVersion version, Instant dueBefore, Instant now, String reason,
            int limit) {
        return parking.park(version, dueBefore, now, reason, limit);
    }

    @Override
    public List<RecordedEvent> unpark(Set<WorkflowVersion> versions, Instant now, String message, int limit) {
        return parking.unpark(versions, now, message, limit);
    }

    @Override
    public Optional<TaskInfo> find(TaskId taskId) {
        return reads.find(taskId);
    }

    @Override
    public Optional<TaskId> findByBusinessKey(String workflow, String businessKey) {
        return reads.findByBusinessKey(workflow, businessKey);
    }

    @Override
    public List<TaskInfo> list(TaskQuery query) {
        return reads.list(query);
    }

    @Override
    public Map<TaskStatus, Long> countByStatus() {
        return reads.countByStatus();
    }

    @Override
    public Map<String, Map<TaskStatus, Long>> countByWorkflow() {
        return reads.countByWorkflow();
    }

    @Override
    public List<TaskEvent> events(TaskId taskId) {
        return reads.events(taskId);
    }

    @Override
    public boolean resubmit(TaskId taskId, Instant now, TaskEvent event) {
        return operator.resubmit(taskId, now, event);
    }

    @Override
    public boolean requestCancel(TaskId taskId, Instant now, TaskEvent event) {
        return operator.requestCancel(taskId, now, event);
    }

    @Override
    public int purge(Instant finishedBefore, int limit) {
        return retention.purge(finishedBefore, limit);
    }

    @Override
    public boolean supportsFlowControl() {
        return true;
    }

    @Override
    public <T> T changeGate(String gate, Instant now, Function<GateView, GateChange<T>> decide) {
        return gates.changeGate(gate, now, decide);
    }

    @Override
    public int renewPermits(Collection<String> permitIds, Instant now, Instant expiresAt) {
        return gates.renewPermits(permitIds, now, expiresAt);
    }

    @Override
    public int wakeWaiting(Set<StepKey> steps, Instant now, int limit) {
        return gates.wakeWaiting(steps, now, limit);
    }

    @Override
    public List<GateView> gates(Instant now) {
        return gates.gates(now);
    }
}
