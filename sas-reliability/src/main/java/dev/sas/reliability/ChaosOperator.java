package dev.sas.reliability;

import dev.sas.core.SasClient;
import dev.sas.core.StateStoreException;
import dev.sas.core.TaskId;
import dev.sas.core.TaskInfo;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * The application and the operator of a chaos run: submits the tasks through a client, cancels
 * the tasks picked for it (half at a random moment, half as soon as they run) and resubmits the
 * poison tasks picked for it once they are in {@code ERROR}, recording each action with the
 * database clock in {@code <prefix>chaos_action}. Thread-safe.
 */
final class ChaosOperator {
    private final ChaosSettings s;
    private final ChaosDb db;
    private final String prefix;
    private final String harnessUrl;
    private final AtomicBoolean closing;
    private final Consumer<String> log;
    private final SasClient client;
    private final Workflow<String> workflow;
    private final ScheduledExecutorService operator;
    final List<TaskId> ids = Collections.synchronizedList(new ArrayList<>());
    /** Cancels scheduled but not yet sent. */
    final AtomicInteger pendingCancels = new AtomicInteger();
    /** Poison tasks to resubmit once they are in ERROR; removed when resubmitted. */
    final Set<TaskId> toResubmit = ConcurrentHashMap.newKeySet();
    volatile boolean submitted;
    volatile int submitFailures;

    ChaosOperator(ChaosSettings s, String prefix, String harnessUrl, AtomicBoolean closing, Consumer<String> log,
            SasClient client, Workflow<String> workflow, ScheduledExecutorService operator) {
        this.s = s;
        this.db = s.db();
        this.prefix = prefix;
        this.harnessUrl = harnessUrl;
        this.closing = closing;
        this.log = log;
        this.client = client;
        this.workflow = workflow;
        this.operator = operator;
    }

    /**
     * Submits every task on 4 threads, spread evenly over {@link ChaosSettings#submitWindowMs()} so
     * that work arrives during the whole chaos (a retried submit is deduplicated by business key, so
     * retrying after a store failure is safe).
     */
    void submitAll() throws InterruptedException {
        long t0 = System.currentTimeMillis();
        AtomicInteger next = new AtomicInteger();
        long window = s.submitWindowMs();
        AtomicInteger failures = new AtomicInteger();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            Thread th = new Thread(() -> {
                for (int i = next.getAndIncrement(); i < s.tasks && !closing.get(); i = next.getAndIncrement()) {
                    long wait = t0 + window * i / s.tasks - System.currentTimeMillis();
                    if (wait > 0) {
                        pause(wait);
                    }
                    submit(i, failures);
                }
            }, "chaos-submit-" + t);
            th.start();
            threads.add(th);
        }
        for (Thread th : threads) {
            th.join();
        }
        submitFailures = failures.get();
        submitted = true;
        log.accept("submitted " + ids.size() + " tasks in " + (System.currentTimeMillis() - t0) + " ms");
    }

    private void submit(int i, AtomicInteger failures) {
        Fault fault = s.fault(i);
        String input = ChaosInput.of(i, fault, s.deepPoison(i));
        TaskId id = null;
        for (int attempt = 1; id == null; attempt++) {
            try {
                id = client.submit(workflow, "t-" + i, input).id();
            } catch (StateStoreException e) {
                if (attempt >= 40) {
                    failures.incrementAndGet();
                    log.accept("submit of task " + i + " failed for good: " + e);
                    return;
                }
                pause(250);
            }
        }
        ids.add(id);
        if (fault == Fault.CANCEL) {
            scheduleCancel(id);
        } else if (s.resubmitted(i)) {
            toResubmit.add(id);
        }
    }

    /**
     * Cancels {@code id} and records the answer: half of the cancels at a random moment within
     * {@link ChaosSettings#cancelWithin}, the other half as soon as the task is seen running
     * (no longer {@code PENDING}: polled every 5 ms for 20 × {@code cancelWithin}, then every 50 ms
     * until the run's time-out, so that under a backlog they still wait for the task to run), so
     * that they land on running steps, whose calls last longer than that poll.
     */
    private void scheduleCancel(TaskId id) {
        pendingCancels.incrementAndGet();
        if (ThreadLocalRandom.current().nextBoolean()) {
            long now = System.nanoTime();
            long slower = now + s.cancelWithin.multipliedBy(20).toNanos();
            long giveUp = now + s.timeout.toNanos();
            operator.schedule(() -> cancelWhenRunning(id, slower, giveUp), 0, TimeUnit.MILLISECONDS);
            return;
        }
        long delay = ThreadLocalRandom.current().nextLong(s.cancelWithin.toMillis() + 1);
        operator.schedule(() -> sendCancel(id), delay, TimeUnit.MILLISECONDS);
    }

    private void cancelWhenRunning(TaskId id, long slowerNanos, long giveUpNanos) {
        boolean running;
        try {
            running = client.find(id).map(t -> t.status() != TaskStatus.PENDING).orElse(false);
        } catch (RuntimeException e) {
            running = false;
        }
        if (running || closing.get() || System.nanoTime() - giveUpNanos > 0) {
            sendCancel(id);
        } else {
            long poll = System.nanoTime() - slowerNanos > 0 ? 50 : 5;
            operator.schedule(() -> cancelWhenRunning(id, slowerNanos, giveUpNanos), poll, TimeUnit.MILLISECONDS);
        }
    }

    private void sendCancel(TaskId id) {
        try {
            for (int attempt = 1; ; attempt++) {
                try {
                    boolean accepted = client.operations().cancel(id);
                    // after a failed attempt, false is ambiguous: that attempt may have committed before
                    // its connection was lost (a failover), and a second request for a cancel is refused
                    record(id, attempt == 1 ? "cancel" : "cancel-retried", accepted);
                    return;
                } catch (StateStoreException e) {
                    if (attempt >= 40 || closing.get()) {
                        log.accept("cancel of task " + id + " failed for good: " + e);
                        return;
                    }
                    pause(250);
                }
            }
        } finally {
            pendingCancels.decrementAndGet();
        }
    }

    /** Resubmits, once each, the poison tasks picked for it as soon as they are in ERROR. */
    void resubmitErrors() {
        for (TaskId id : toResubmit) {
            try {
                Optional<TaskInfo> info = client.find(id);
                if (info.isPresent() && info.get().status() == TaskStatus.ERROR) {
                    client.operations().resubmit(id);
                    toResubmit.remove(id);
                    record(id, "resubmit", true);
                }
            } catch (RuntimeException e) {
                // the database is restarting, or the task moved on: try again on the next round
            }
        }
    }

    /** True when every task was submitted, every cancel sent and every picked poison task resubmitted. */
    boolean done() {
        return submitted && pendingCancels.get() == 0 && toResubmit.isEmpty();
    }

    /** Records an operator action, stamped with the database clock (retried while the database is down). */
    private void record(TaskId id, String action, boolean result) {
        String sql = "INSERT INTO " + prefix + "chaos_action (task_id, action, result, at) VALUES (?, ?, ?, "
                + db.nowMillis() + ")";
        for (int attempt = 1; attempt <= 40 && !closing.get(); attempt++) {
            try (Connection c = DriverManager.getConnection(harnessUrl); PreparedStatement ps = c.prepareStatement(sql)) {
                ps.setString(1, id.value());
                ps.setString(2, action);
                ps.setInt(3, result ? 1 : 0);
                ps.executeUpdate();
                return;
            } catch (SQLException e) {
                pause(250);
            }
        }
        log.accept("could not record " + action + " of task " + id);
    }

    static void pause(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
