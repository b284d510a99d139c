package dev.sas.jdbc.internal;

import static dev.sas.jdbc.internal.Rows.setString;

import dev.sas.core.StateStoreException;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.spi.ClaimedTask;
import dev.sas.core.spi.NewTask;
import dev.sas.core.spi.SubmitResult;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.jdbi.v3.core.JdbiException;

/**
 * Submission of one task or many: task rows as multi-row INSERTs, a duplicate (workflow, business
 * key) resolved to the existing task, and the RECEIVED events of the created tasks, all in one
 * transaction (the store's or the host's, see {@link HostTransactions}). Plain JDBC: this is the
 * write path, where binding through Jdbi cost more CPU per row than the database spent on it.
 * Thread-safe.
 */
final class Submits {

    /**
     * Task rows per INSERT: 13 parameters each, 13,000 per statement, below PostgreSQL's 32,767 and
     * MariaDB's 65,535.
     */
    static final int TASKS_PER_STATEMENT = 1000;
    /**
     * Characters of input and business key per INSERT, so a statement of large inputs stays well
     * under MariaDB's default max_allowed_packet (16 MiB). A single larger task goes on its own.
     */
    static final long CHARS_PER_STATEMENT = 2_000_000;
    /**
     * Most one "work is due" hint per this interval from one store (PostgreSQL). A {@code NOTIFY}
     * serialises the commits of the transactions that send one and wakes every listening node, and
     * at a thousand submits a second it cost about half of the submit path; a node woken by a hint
     * looks again shortly after ({@code SasRuntime}), which finds the submits of the interval
     * that sent none. Only hints of committed store transactions count: a submit in a host's
     * transaction, which may roll back, always sends its own.
     */
    static final long HINT_INTERVAL_NANOS = 2_000_000;

    private final StoreContext db;
    private final PendingStarts pendingStarts;
    private final HostTransactions host;
    private final String hintSql;
    private final TaskInserts inserts;
    /** When the last hint of a committed store transaction was sent ({@link System#nanoTime()}). */
    private final AtomicLong lastHintNanos = new AtomicLong(System.nanoTime() - HINT_INTERVAL_NANOS);
    private final PlannerStatistics statistics;

    Submits(StoreContext db, PendingStarts pendingStarts) {
        this.db = db;
        this.pendingStarts = pendingStarts;
        this.statistics = new PlannerStatistics(db);
        this.host = new HostTransactions(db);
        this.hintSql = db.dialect().submitHintSql(db.t());
        this.inserts = new TaskInserts(db);
    }

    /** See {@code StateStore.submit}. */
    SubmitResult submit(NewTask task, TaskEvent received, Object transaction) {
        return submitAll(List.of(task), List.of(received), transaction).get(0);
    }

    /** See {@code StateStore.submitAll}. */
    List<SubmitResult> submitAll(List<NewTask> tasks, List<TaskEvent> received, Object transaction) {
        return submitAll(tasks, received, transaction, null);
    }

    /**
     * See {@code ClaimedSubmits.submitClaimed}: a single submit whose row is inserted claimed. Its
     * start event is kept in the row like its RECEIVED event, so the submit writes one row, as an
     * unclaimed one does.
     */
    SubmitResult submitClaimed(NewTask task, TaskEvent received, String instanceId) {
        Objects.requireNonNull(instanceId, "instanceId must not be null");
        Objects.requireNonNull(task, "task must not be null");
        Objects.requireNonNull(received, "received must not be null");
        TaskInserts.Claim claim = new TaskInserts.Claim(instanceId,
                EventRows.impliedByTaskRow(received, task.createdAt()));
        SubmitResult result = submitAll(List.of(task), List.of(received), null, claim).get(0);
        if (result.created()) {
            // its start is kept in the row (started_step) or written as an event: none pending
            pendingStarts.claimed(result.taskId().value(), ClaimedTask.atSubmit(task).lease(), null);
        }
        return result;
    }

    /** @param claim how the created tasks are inserted claimed, or null to insert them due */
    private List<SubmitResult> submitAll(List<NewTask> tasks, List<TaskEvent> received, Object transaction,
            TaskInserts.Claim claim) {
        Objects.requireNonNull(tasks, "tasks must not be null");
        Objects.requireNonNull(received, "received must not be null");
        if (tasks.size() != received.size()) {
            throw new IllegalArgumentException("tasks and received must have the same size, were " + tasks.size()
                    + " and " + received.size());
        }
        boolean single = tasks.size() == 1;
        HostTransactions.checkJoinable(transaction, single ? "task " + tasks.get(0).taskId()
                : "a batch of " + tasks.size() + " tasks");
        if (tasks.isEmpty()) {
            return List.of();
        }
        Set<TaskId> ids = new HashSet<>();
        for (int i = 0; i < tasks.size(); i++) {
            NewTask task = Objects.requireNonNull(tasks.get(i), "tasks[" + i + "] must not be null");
            Objects.requireNonNull(received.get(i), "received[" + i + "] must not be null");
            checkLengths(task);
            if (!ids.add(task.taskId())) {
                throw new IllegalArgumentException("task id " + task.taskId() + " appears twice in the batch");
            }
        }
        String operation = single ? "submit" : "submitAll of " + tasks.size() + " tasks";
        Object taskId = single ? tasks.get(0).taskId() : null;
        try {
            // a host's transaction may still roll back: it always sends its own hint, which never
            // counts for others
            boolean hostTransaction = transaction != null;
            long[] hintSentAt = {0};
            List<SubmitResult> results = host.inTransaction(transaction, operation, c -> {
                List<SubmitResult> r = submitIn(c, tasks, received, claim);
                // a claimed task is nobody else's to wake for
                hintSentAt[0] = claim == null ? sendHint(c, hostTransaction) : 0;
                return r;
            });
            if (!hostTransaction && hintSentAt[0] != 0) {
                lastHintNanos.accumulateAndGet(hintSentAt[0], Math::max);
            }
            statistics.inserted(tasks.size());
            return results;
        } catch (SQLException | JdbiException e) {
            if (StoreContext.isValueTooLong(e)) {
                throw valueTooLong(operation, tasks, e);
            }
            throw db.failed(operation, taskId, e);
        }
    }

    private List<SubmitResult> submitIn(Connection c, List<NewTask> tasks, List<TaskEvent> received,
            TaskInserts.Claim claim) throws SQLException {
        int n = tasks.size();
        // the first task of a (workflow, business key) in the batch wins; later ones get its id
        Map<List<String>, Integer> firstOfKey = new HashMap<>();
        int[] leader = new int[n];
        List<Integer> leaders = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            NewTask task = tasks.get(i);
            Integer first = firstOfKey.putIfAbsent(List.of(task.workflow(), task.businessKey()), i);
            leader[i] = first == null ? i : first;
            if (first == null) {
                leaders.add(i);
            }
        }
        Boolean[] created = new Boolean[n];
        TaskId[] resultIds = new TaskId[n];
        int from = 0;
        while (from < leaders.size()) {
            int to = chunkEnd(tasks, leaders, from);
            List<NewTask> chunk = new ArrayList<>(to - from);
            for (int k = from; k < to; k++) {
                chunk.add(tasks.get(leaders.get(k)));
            }
            boolean[] inserted = inserts.insert(c, chunk, claim);
            List<NewTask> unresolved = new ArrayList<>();
            for (int k = 0; k < chunk.size(); k++) {
                if (inserted[k]) {
                    created[leaders.get(from + k)] = true;
                    resultIds[leaders.get(from + k)] = chunk.get(k).taskId();
                } else {
                    unresolved.add(chunk.get(k));
                }
            }
            if (!unresolved.isEmpty()) {
                Map<List<String>, TaskId> existing = existingIds(c, unresolved);
                for (int k = 0; k < chunk.size(); k++) {
                    NewTask task = chunk.get(k);
                    if (!inserted[k]) {
                        TaskId id = existing.get(List.of(task.workflow(), task.businessKey()));
                        if (id == null) {
                            throw notFound(c, task);
                        }
                        created[leaders.get(from + k)] = false;
                        resultIds[leaders.get(from + k)] = id;
                    }
                }
            }
            from = to;
        }
        // a RECEIVED event is read back from its task row (EventRows), but its status channel hears it
        List<TaskEvent> events = new ArrayList<>();
        List<TaskEvent> outbox = new ArrayList<>();
        Map<TaskId, String> statusChannel = new HashMap<>();
        List<SubmitResult> results = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            boolean isNew = leader[i] == i && created[i];
            if (isNew) {
                if (!EventRows.impliedByTaskRow(received.get(i), tasks.get(i).createdAt())) {
                    events.add(received.get(i));
                }
                NewTask task = tasks.get(i);
                TaskEvent started = claim == null ? null : EventRows.startedAtSubmit(task.taskId(), task.businessKey(),
                        task.workflow(), task.firstStepName(), task.createdAt());
                if (started != null && !claim.startImplied()) {
                    events.add(started);
                }
                if (tasks.get(i).statusChannel() != null) {
                    statusChannel.put(tasks.get(i).taskId(), tasks.get(i).statusChannel());
                    outbox.add(received.get(i));
                    if (started != null) {
                        outbox.add(started);
                    }
                }
            }
            results.add(new SubmitResult(resultIds[leader[i]], isNew));
        }
        EventRows.insert(c, db.t(), events);
        Rows.insertOutbox(c, db.t(), outbox, statusChannel);
        return results;
    }

    /**
     * Sends the "work is due" hint with the commit of {@code c}'s transaction: always in a host's
     * transaction, else unless a committed one of this store went out within
     * {@link #HINT_INTERVAL_NANOS}.
     *
     * @return when it was sent ({@link System#nanoTime()}), or 0 if it was not
     */
    private long sendHint(Connection c, boolean always) throws SQLException {
        long now = System.nanoTime();
        if (hintSql == null || (!always && now - lastHintNanos.get() < HINT_INTERVAL_NANOS)) {
            return 0;
        }
        try (PreparedStatement ps = c.prepareStatement(hintSql)) {
            ps.execute();
        }
        return now;
    }

    /** The end (exclusive) of the chunk of {@code leaders} that starts at {@code from}. */
    private static int chunkEnd(List<NewTask> tasks, List<Integer> leaders, int from) {
        int to = from;
        long chars = 0;
        while (to < leaders.size() && to - from < TASKS_PER_STATEMENT) {
            NewTask task = tasks.get(leaders.get(to));
            chars += task.input().length() + task.businessKey().length();
            if (to > from && chars > CHARS_PER_STATEMENT) {
                break;
            }
            to++;
        }
        return to;
    }

    /** The ids of the tasks now holding the (workflow, business key) of {@code tasks}, as the latest commit shows. */
    private Map<List<String>, TaskId> existingIds(Connection c, List<NewTask> tasks) throws SQLException {
        Map<String, List<String>> keysByWorkflow = new LinkedHashMap<>();
        for (NewTask task : tasks) {
            keysByWorkflow.computeIfAbsent(task.workflow(), w -> new ArrayList<>()).add(task.businessKey());
        }
        Map<List<String>, TaskId> out = new HashMap<>();
        for (Map.Entry<String, List<String>> e : keysByWorkflow.entrySet()) {
            List<String> keys = e.getValue();
            // one key: the statement single submits have always used
            String keyCondition = keys.size() == 1 ? "business_key = ?"
                    : "business_key IN (" + Dialect.placeholders(keys.size()) + ")";
            try (PreparedStatement ps = c.prepareStatement("SELECT task_id, business_key FROM " + db.t().task()
                    + " WHERE workflow = ? AND " + keyCondition + db.dialect().latestCommittedReadSuffix())) {
                ps.setString(1, e.getKey());
                Rows.setStrings(ps, 2, keys);
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        out.put(List.of(e.getKey(), rs.getString(2)), TaskId.of(rs.getString(1)));
                    }
                }
            }
        }
        return out;
    }

    /** Neither inserted nor found: the id is taken, or the duplicate is not visible to this transaction yet. */
    private RuntimeException notFound(Connection c, NewTask task) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("SELECT COUNT(*) FROM " + db.t().task() + " WHERE task_id = ?")) {
            ps.setString(1, task.taskId().value());
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                if (rs.getLong(1) > 0) {
                    return new IllegalArgumentException("task id " + task.taskId() + " already exists");
                }
            }
        }
        try (PreparedStatement ps = c.prepareStatement("SELECT business_key FROM " + db.t().task()
                + " WHERE workflow = ? AND business_key = ?")) {
            ps.setString(1, task.workflow());
            ps.setString(2, task.businessKey());
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    String stored = rs.getString(1);
                    if (!task.businessKey().equals(stored)) {
                        // PAD SPACE (MariaDB, MySQL): a key stored before keys ending with a space were refused
                        return new IllegalArgumentException("businessKey '" + task.businessKey() + "' of workflow '"
                                + task.workflow() + "' collides with the stored key '" + stored + "': this database"
                                + " compares keys ignoring trailing spaces. Rename the stored task's key");
                    }
                }
            }
        }
        return new StateStoreException("submit of task " + task.taskId() + " collided with a submission of business key '"
                + task.businessKey() + "' that is not visible (yet); retry");
    }

    /**
     * The database refused a value as too long for its column. The text columns are checked
     * before (see {@link #checkLengths}), so it is an input: the message names the largest.
     */
    private StateStoreException valueTooLong(String operation, List<NewTask> tasks, Exception e) {
        NewTask largest = tasks.get(0);
        for (NewTask task : tasks) {
            if (task.input().length() > largest.input().length()) {
                largest = task;
            }
        }
        String which = tasks.size() == 1 ? "the input of task " + largest.taskId()
                : "an input (the largest is task " + largest.taskId() + "'s)";
        return new StateStoreException(operation + " failed on " + db.dialect().name() + ": " + which
                + " (workflow '" + largest.workflow() + "', business key '" + abbreviate(largest.businessKey())
                + "', " + largest.input().length() + " characters) is too long for the database's input column;"
                + " store large data elsewhere and submit a reference (" + StoreContext.rootMessage(e) + ")", e);
    }

    private static void checkLengths(NewTask task) {
        checkLength("workflow", task.workflow(), 128, task);
        checkLength("businessKey", task.businessKey(), 255, task);
        checkLength("statusChannel", task.statusChannel(), 255, task);
        checkLength("firstStepName", task.firstStepName(), 200, task);
    }

    private static void checkLength(String what, String value, int max, NewTask task) {
        if (value != null && value.length() > max) {
            throw new IllegalArgumentException(what + " of task " + task.taskId() + " must be at most " + max
                    + " characters, was " + value.length());
        }
    }

    private static String abbreviate(String s) {
        return s.length() <= 80 ? s : s.substring(0, 77) + "...";
    }
}
