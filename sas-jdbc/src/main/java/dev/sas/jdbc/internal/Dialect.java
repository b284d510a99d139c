package dev.sas.jdbc.internal;

import com.zaxxer.hikari.HikariConfig;
import dev.sas.core.spi.TaskDecisions;
import dev.sas.core.spi.WorkflowVersion;
import java.sql.SQLException;
import java.util.List;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.statement.SqlStatement;

/**
 * Everything that differs between databases. One implementation per database, chosen by
 * {@link Dialects#detect}; the store itself has no database-specific branches. Implementations
 * are stateless and thread-safe. Not API.
 */
public interface Dialect {

    /**
     * A query returning the database server's current time as seconds since the epoch, with at
     * least millisecond precision (a decimal number, so no driver time-zone conversion applies).
     */
    String currentEpochSecondsSql();

    /**
     * The claimable states, each read by a claim on its own: with one state per query, the index
     * {@code (state, priority DESC, next_attempt_at)} returns due rows already in claim order
     * (MariaDB and H2, whose claim index is not partial). WAITING holds tasks whose agent call was
     * held back by its flow control; they are claimed like PENDING ones.
     */
    List<String> CLAIMABLE_STATE_LIST = List.of("PENDING", "COMPENSATING", "WAITING");

    /** The state a claimable task is in, as an SQL list (PostgreSQL's partial claim index names the same list). */
    String CLAIMABLE_STATES = "('PENDING','COMPENSATING','WAITING')";

    /** The claim's new state for a claimed row's {@code state} column: PENDING and WAITING become PROCESSING. */
    static String claimedState(String column) {
        return "CASE WHEN " + column + " IN ('PENDING','WAITING') THEN 'PROCESSING' ELSE " + column + " END";
    }

    /**
     * The claim's pending start (one {@code ?}: the claim's time, see
     * {@link EventRows#claimSetsPendingStart}): none for a task whose
     * cancel was requested and that is not compensating, because its claim does not start the step
     * (the scheduler cancels it, or starts compensating it, at once); {@code state} is the row's
     * state before or after the claim (a claim keeps COMPENSATING).
     */
    static String claimedStart(String cancelColumn, String stateColumn) {
        return "CASE WHEN " + cancelColumn + " = TRUE AND " + stateColumn + " <> 'COMPENSATING' THEN NULL ELSE ? END";
    }

    /** Short name, also the schema resource folder: {@code h2}, {@code postgresql}, {@code mariadb}. */
    String name();

    /**
     * Driver properties for a pool this store creates (e.g. the application name seen by the
     * server), including the connect, socket and statement time-outs of {@code timeouts}.
     */
    default void configurePool(HikariConfig config, String poolName, Timeouts timeouts) {
        // nothing driver-specific by default
    }

    /**
     * How to give a data source of this database a socket (network) time-out, for the WARN the
     * store logs when a handed-in data source has none: which driver property, in which unit,
     * where to set it.
     */
    default String socketTimeoutAdvice() {
        return "Set the JDBC driver's socket (read) time-out in the URL or the pool's data source properties.";
    }

    /** The time-outs {@link #configurePool} applies, as the store logs them at start. */
    default String describe(Timeouts timeouts) {
        return timeouts.toString();
    }

    /**
     * Inserts {@code rows} PENDING task rows in one statement, 13 parameters per row (task_id,
     * workflow, workflow_version, business_key, priority, next_attempt_at, current_step_name,
     * step_timeout_ms, created_at, updated_at, input, reply_to, trace_context). On a row whose workflow and
     * business key exist it either skips the row (then {@link #insertTasksReturnsIds} is true and
     * the statement returns the ids it inserted) or fails as a whole with a duplicate-key error that
     * {@link #isDuplicateKey} recognises and that does not abort the surrounding transaction: a
     * host transaction goes on. {@code claimed}: each row also binds locked_by, complete_by and
     * started_step (16 parameters) and is inserted as a claim makes it (PROCESSING, lease 1,
     * attempt 1).
     */
    default String insertTasksSql(Tables t, int rows, boolean claimed) {
        return plainInsertTasksSql(t, rows, claimed);
    }

    /**
     * An INSERT of any number of task rows from one array per column, as {@link #insertTasksSql}
     * inserts them unclaimed (12 array parameters: task_id, workflow, workflow_version,
     * business_key, priority, next_attempt_at, current_step_name, step_timeout_ms, created_at,
     * input, reply_to, trace_context; created_at is updated_at too), or null where the database
     * has no arrays to insert from. {@code skipDuplicates}: as {@link #insertTasksSql} does, returning
     * the ids it inserted; else a duplicate fails the statement. Its text does not depend on the
     * number of rows, so one prepared statement serves every batch, and the server parses 12
     * parameters instead of 13 per row.
     */
    default String insertTaskArraysSql(Tables t, boolean skipDuplicates) {
        return null;
    }

    /**
     * True if arrays bind as parameters (PostgreSQL): the transitions of a batch are then one
     * {@code UPDATE … FROM unnest(?::type[], …) AS v(…) … RETURNING}, not one statement per row (the
     * executor and the trigger conditions are set up once per batch), and a list of ids is one
     * {@code = ANY(?)} parameter, so the statement text does not depend on the list's length.
     */
    default boolean bindsArrays() {
        return false;
    }

    /** True if {@link #insertTasksSql} skips duplicates and returns the task_id of each row it inserted. */
    default boolean insertTasksReturnsIds() {
        return false;
    }

    /** The columns every insert of new task rows names, in this order (claimed rows add three). */
    String TASK_INSERT_COLUMNS = "task_id, workflow, workflow_version, business_key, state, priority, lease,"
            + " next_attempt_at, failure_count, current_step, current_step_name, attempt, step_timeout_ms,"
            + " cancel_requested, created_at, updated_at, input, reply_to, trace_context";

    /** The plain multi-row INSERT of {@link #insertTasksSql}, for dialects that add a conflict clause to it. */
    static String plainInsertTasksSql(Tables t, int rows, boolean claimed) {
        return "INSERT INTO " + t.task() + " (" + TASK_INSERT_COLUMNS
                + (claimed ? ", locked_by, complete_by, " + EventRows.STARTED_STEP : "") + ") VALUES "
                + String.join(", ", java.util.Collections.nCopies(rows, claimed
                        ? "(?, ?, ?, ?, " + submittedState(true) + ", ?, 1, ?, 0, 0, ?, 1, ?, FALSE, ?, ?, ?, ?, ?, ?, ?, ?)"
                        : "(?, ?, ?, ?, " + submittedState(false) + ", ?, 0, ?, 0, 0, ?, 0, ?, FALSE, ?, ?, ?, ?, ?)"));
    }

    /**
     * The state of a new task row ({@link TaskDecisions#submitted}) as an SQL literal: the same for
     * every row of an insert, so it is not a parameter of each.
     */
    static String submittedState(boolean claimed) {
        return "'" + TaskDecisions.submitted(claimed).name() + "'";
    }

    /**
     * A select of the task rows among {@code rows} ids that no other transaction holds, locking
     * them, without waiting for those that are held ({@code FOR UPDATE SKIP LOCKED}); null where the
     * database cannot skip locked rows (H2), and the writer then waits as for any write.
     */
    default String lockUnlessLockedSql(Tables t, int rows) {
        return "SELECT task_id FROM " + t.task() + " WHERE task_id IN (" + placeholders(rows) + ")"
                + " ORDER BY task_id FOR UPDATE SKIP LOCKED";
    }

    /** Appended to the select that re-reads the task a duplicate submission collided with. */
    String latestCommittedReadSuffix();

    /** True if {@code e} (or a cause) is a unique-constraint violation. */
    default boolean isDuplicateKey(Throwable e) {
        for (Throwable c = e; c != null; c = c.getCause()) {
            if (c instanceof SQLException s && s.getSQLState() != null && s.getSQLState().equals("23505")) {
                return true;
            }
        }
        return false;
    }

    /**
     * Claims up to {@code limit} due tasks for {@code instanceId} inside the open transaction of
     * {@code h}: lock, lease+1, attempt+1, completeBy = now + step timeout, PENDING and WAITING →
     * PROCESSING.
     * Only rows of a workflow version in {@code runnable} (not empty) are claimed, filtered with
     * {@link #runnableFilter} on the claim index's scan. Returns the rows as they are after the
     * claim, in any order.
     */
    List<ClaimRow> claim(Handle h, Tables t, String instanceId, int limit, long now, List<WorkflowVersion> runnable);

    /**
     * True if {@link #claim} already inserted the start events of tasks with a status channel into
     * their outbox (PostgreSQL does it in one statement). No dialect's claim writes event rows: it
     * leaves its start events pending in the task row, or {@link Claims} writes them (see
     * {@link EventRows#claimSetsPendingStart}).
     */
    boolean claimRecordsStatusUpdates();

    /**
     * Upserts {@code rows} step results (of different tasks) in one statement, 9 parameters per
     * row: task_id, step_index, step_name, state, attempts, output, error, started_at, finished_at.
     * Leaves compensation_state unchanged.
     */
    String upsertStepSql(Tables t, int rows);

    /** The array element types of a step row's columns, in {@link #upsertStepSql}'s order. */
    String[] STEP_COLUMN_TYPES = {"varchar", "int4", "varchar", "varchar", "int4", "text", "text", "int8", "int8"};

    /**
     * {@link #upsertStepSql} from one array per column ({@link ArrayColumns}, types
     * {@link #STEP_COLUMN_TYPES}), where the dialect {@link #bindsArrays}; null otherwise.
     */
    default String upsertStepFromArraysSql(Tables t) {
        return null;
    }

    /** {@code n} comma-separated placeholders, for an {@code IN (…)} list or one VALUES row. */
    static String placeholders(int n) {
        return String.join(", ", java.util.Collections.nCopies(n, "?"));
    }

    /** {@code (workflow, workflow_version) IN ((?, ?), …)} for {@code n} versions; bind with {@link #bindRunnable}. */
    static String runnableFilter(int n) {
        return "(workflow, workflow_version) IN (" + valueRows(n, 2) + ")";
    }

    /** Binds {@link #runnableFilter}'s parameters from position {@code from}; returns the next position. */
    static int bindRunnable(SqlStatement<?> statement, int from, List<WorkflowVersion> runnable) {
        int next = from;
        for (WorkflowVersion v : runnable) {
            statement.bind(next++, v.workflow());
            statement.bind(next++, v.version());
        }
        return next;
    }

    /** {@code rows} groups of {@code columns} placeholders, for a multi-row VALUES clause. */
    static String valueRows(int rows, int columns) {
        return String.join(", ", java.util.Collections.nCopies(rows, "(" + placeholders(columns) + ")"));
    }

    /**
     * Records a compensation result with 5 parameters: task_id, step_index, step_name,
     * compensation_state, error. Inserts a COMPLETED row with 0 attempts if there is none; otherwise
     * changes only step_name, compensation_state and error.
     */
    String upsertCompensationSql(Tables t);

    /**
     * Selects {@link TaskChanges#SNAPSHOT_COLUMNS} of up to {@code limit} unclaimed WAITING tasks not due at {@code now} and at one
     * of {@code steps} steps, highest priority first, then due first: parameters now, then workflow,
     * version and step per step, then limit. Reads the WAITING rows through the claim's index.
     */
    default String wakeWaitingCandidatesSql(Tables t, int steps) {
        return "SELECT " + TaskChanges.SNAPSHOT_COLUMNS + " FROM " + t.task() + " WHERE "
                + ScanPredicates.WAITING_NOT_DUE
                + " AND (workflow, workflow_version, current_step) IN (" + valueRows(steps, 3) + ")"
                + " ORDER BY priority DESC, next_attempt_at LIMIT ?";
    }

    /**
     * Serialises schema changes of instances starting at once, inside the schema transaction of
     * {@code h}. Default: nothing (scripts are idempotent, DDL races are retried).
     */
    default void lockSchema(Handle h, Tables t) {
    }

    /**
     * The wake-up hints this database can push across nodes, or null (then runtimes poll
     * adaptively). PostgreSQL: {@code LISTEN/NOTIFY} on one connection of the store's pool.
     */
    default PgSignals signals(StoreContext db) {
        return null;
    }

    /**
     * A statement that sends the "work is due" hint with the commit of the transaction it runs in,
     * or null where the database pushes no hints. PostgreSQL: {@code SELECT pg_notify(<prefix>due, '')}.
     */
    default String submitHintSql(Tables t) {
        return null;
    }

    /**
     * Statements that refresh the planner's statistics of the tables the hot path reads by key
     * (see {@link PlannerStatistics}), or an empty list where cached plans need no refresh.
     */
    default List<String> refreshStatisticsSql(Tables t) {
        return List.of();
    }

    /** Drops what the schema scripts created besides tables (PostgreSQL: the trigger functions). Tests only. */
    default void dropExtras(Handle h, Tables t) {
    }

    /** Runs after the schema scripts (PostgreSQL analyses the new tables). */
    default void afterSchemaApplied(Handle h, Tables t) {
    }
}
