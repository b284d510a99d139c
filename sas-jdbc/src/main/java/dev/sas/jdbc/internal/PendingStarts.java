package dev.sas.jdbc.internal;

import dev.sas.core.TaskEvent;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The start events this store's own claims (and claimed submits) left pending in task rows (schema
 * V14, see {@link EventRows}), by task and lease, so that the write that ends the attempt need not
 * read them back. Only a hint: every transition is fenced by the pending start it names, so one the
 * row no longer holds (a cancel request wrote it) makes the write read the row and go again.
 * Bounded: past {@link #MAX} claims it forgets them all, and writes read instead. Thread-safe.
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
}
