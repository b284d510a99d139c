package dev.sas.jdbc.internal;

import dev.sas.core.TaskEvent;
import dev.sas.core.TaskStatus;
import dev.sas.core.spi.Transition;
import dev.sas.core.spi.WriteOutcome;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The start events this store's own claims (and claimed submits) left pending in task rows (schema
 * V14, see {@link EventRows}), by task and lease, so that the write that ends the attempt need not
 * read them back. Only a hint: every transition is fenced by the pending start it names, so one the
 * row no longer holds (a cancel request wrote it) makes the write read the row and go again.
 * Bounded: past {@link #MAX} claims it forgets them all, and writes read instead ({@link #of}, the
 * one read of pending starts a transition's write makes). Thread-safe.
 */
final class PendingStarts {

    /** Claims remembered at most (a claim whose write never comes, its holder gone, stays until then). */
    static final int MAX = 65_536;

    /** What a claim under {@code lease} left pending: {@code start}, or null for none (started at submit). */
    record Entry(long lease, TaskEvent start) {
    }

    private final ConcurrentHashMap<String, Entry> byTask = new ConcurrentHashMap<>();

    /** Remembers that the claim of {@code taskId} under {@code lease} left {@code start} pending (null: none). */
    void claimed(String taskId, long lease, TaskEvent start) {
        if (byTask.size() >= MAX) {
            byTask.clear();
        }
        byTask.put(taskId, new Entry(lease, start));
    }

    /** What this store's claim of {@code taskId} under {@code lease} left pending, or null if not known here. */
    Entry get(String taskId, long lease) {
        Entry e = byTask.get(taskId);
        return e != null && e.lease() == lease ? e : null;
    }

    /** Forgets {@code taskId}: a write under its claim applied (or can no longer apply). */
    void forget(String taskId) {
        byTask.remove(taskId);
    }

    /**
     * The start events that claims left pending in the rows of the tasks {@code transitions} may
     * change (schema V14, see {@link EventRows}), by task id: as this store's own claims left them
     * ({@code useKnown}), else read, without a lock, before the update clears them. Each update is
     * fenced by the value found here: only a claim sets one (and it moves the lease on), and only a
     * transition or a cancel request clears it, so a value that changed meanwhile makes the update
     * change nothing, and the writer looks again.
     */
    Map<String, TaskEvent> of(Connection c, StoreContext db, List<Transition> transitions, Integer[] order,
            WriteOutcome[] outcomes, boolean useKnown) throws SQLException {
        List<String> ids = new ArrayList<>();
        Map<String, TaskEvent> starts = new HashMap<>();
        for (int i : order) {
            Transition x = transitions.get(i);
            // a task awaiting a reply was released by a transition, which wrote its start
            if (outcomes[i] != null || x.fromStatus() == TaskStatus.AWAITING_COMPLETION) {
                continue;
            }
            PendingStarts.Entry mine = useKnown ? get(x.taskId().value(), x.lease()) : null;
            if (mine == null) {
                ids.add(x.taskId().value());
            } else if (mine.start() != null) {
                starts.put(x.taskId().value(), mine.start());
            }
        }
        ids = ids.stream().distinct().toList();
        if (ids.isEmpty()) {
            return starts;
        }
        starts.putAll(EventRows.pendingStarts(c, db, ids));
        return starts;
    }
}
