package dev.sas.bench;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * What a system reports back: task {@code i} started (its step body was entered) or is done (its
 * final state committed). Times are {@link System#nanoTime()}; the first start of a task is kept.
 */
public final class Probe {

    private final AtomicLongArray submitted;
    private final AtomicLongArray started;
    private final AtomicLongArray done;
    private final AtomicInteger doneCount = new AtomicInteger();
    private final AtomicInteger startCount = new AtomicInteger();
    private final AtomicInteger duplicates = new AtomicInteger();
    private volatile CountDownLatch target = new CountDownLatch(0);
    private volatile int targetCount;

    public Probe(int n) {
        submitted = new AtomicLongArray(n);
        started = new AtomicLongArray(n);
        done = new AtomicLongArray(n);
    }

    public int size() {
        return done.length();
    }

    public void submitted(int i, long nanos) {
        submitted.set(i, nanos);
    }

    public void started(int i) {
        if (started.compareAndSet(i, 0, System.nanoTime())) {
            startCount.incrementAndGet();
        }
    }

    public void done(int i) {
        if (done.compareAndSet(i, 0, System.nanoTime())) {
            int c = doneCount.incrementAndGet();
            CountDownLatch l = target;
            if (c >= targetCount) {
                l.countDown();
            }
        } else {
            duplicates.incrementAndGet();
        }
    }

    /** Waits until at least {@code count} tasks are done. */
    public boolean awaitDone(int count, long timeoutMs) throws InterruptedException {
        synchronized (this) {
            targetCount = count;
            target = new CountDownLatch(1);
        }
        if (doneCount.get() >= count) {
            return true;
        }
        return target.await(timeoutMs, TimeUnit.MILLISECONDS) || doneCount.get() >= count;
    }

    public int doneCount() {
        return doneCount.get();
    }

    public int startCount() {
        return startCount.get();
    }

    public int duplicateDones() {
        return duplicates.get();
    }

    public long submittedAt(int i) {
        return submitted.get(i);
    }

    public long startedAt(int i) {
        return started.get(i);
    }

    public long doneAt(int i) {
        return done.get(i);
    }
}
