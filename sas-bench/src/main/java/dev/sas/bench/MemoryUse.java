package dev.sas.bench;

import com.zaxxer.hikari.HikariDataSource;
import dev.sas.core.Codec;
import dev.sas.core.SasRuntime;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.jdbc.JdbcStateStore;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Phase 6, memory: heap used (after {@code System.gc()}) by a started SAS runtime before and
 * after N pending tasks are submitted to it. Its steps block, so the backlog stays pending while
 * the heap is measured; the runtime must hold only up to {@code maxInFlight} of them, not load the
 * backlog.
 */
final class MemoryUse {

    static final int MiB = 1024 * 1024;

    /**
     * The result.
     *
     * @param tasks tasks submitted
     * @param submitMs time to submit them ({@code threads} submitting threads)
     * @param heapBefore heap used before, bytes
     * @param heapAfter heap used after, bytes
     * @param inFlight the runtime's {@code inFlight()} after
     * @param maxInFlight its {@code maxInFlight}
     * @param pending tasks {@code PENDING} in the store after
     * @param processing tasks {@code PROCESSING} in the store after
     * @param stored tasks in the store, all states
     */
    record Result(int tasks, long submitMs, long heapBefore, long heapAfter, int inFlight, int maxInFlight, long pending,
            long processing, long stored) {
        double deltaMiB() {
            return (heapAfter - heapBefore) / (double) MiB;
        }

        double bytesPerTask() {
            return (heapAfter - heapBefore) / (double) tasks;
        }

        boolean bounded() {
            return inFlight <= maxInFlight;
        }
    }

    private MemoryUse() {
    }

    static Result run(Bench.Options o, Target t, String tag) throws Exception {
        int n = o.memoryTasks;
        String prefix = tag + "_mem_";
        HikariDataSource pool = t.pool("memory");
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger started = new AtomicInteger();
        try {
            JdbcStateStore store = JdbcStateStore.builder().dataSource(pool).tablePrefix(prefix).build();
            // the deadline is far away: no time-outs, retries or recoveries while we measure
            Workflow<String> wf = Workflow.builder("memory", Codec.string())
                    .step("s0", b -> b.execute(ctx -> {
                        started.incrementAndGet();
                        release.await();
                        return null;
                    }).completeWithin(Duration.ofHours(1)))
                    .build();
            SasRuntime sas = SasRuntime.builder()
                    .stateStore(store)
                    .workflow(wf)
                    .schedulerThreads(o.threads)
                    .shutdownGrace(Duration.ZERO)
                    .build();
            try {
                sas.start();
                Thread.sleep(200);
                long before = usedHeapAfterGc();
                long s0 = System.nanoTime();
                submitAll(sas, wf, n, o.threads);
                long submitMs = Bench.elapsedMs(s0);
                // claims stop between maxInFlight - claimBatch/2 and maxInFlight: wait until inFlight stays put
                long until = System.nanoTime() + 30_000_000_000L;
                int last = -1;
                while (System.nanoTime() < until) {
                    Thread.sleep(500);
                    int now = sas.inFlight();
                    if (now > 0 && now == last) {
                        break;
                    }
                    last = now;
                }
                long after = usedHeapAfterGc();
                int inFlight = sas.inFlight();
                Map<TaskStatus, Long> counts = sas.client().countByStatus();
                long stored = counts.values().stream().mapToLong(Long::longValue).sum();
                Result r = new Result(n, submitMs, before, after, inFlight, SasRuntime.DEFAULT_MAX_IN_FLIGHT,
                        counts.get(TaskStatus.PENDING), counts.get(TaskStatus.PROCESSING), stored);
                Bench.log(String.format("  %-30s memory: %,d tasks submitted in %,d ms; heap used %s -> %s MiB"
                                + " (delta %s MiB, %s bytes/task); inFlight %d (max %d), store: %,d PENDING, %,d PROCESSING",
                        Bench.SAS, n, submitMs, Stats.fmt(before / (double) MiB), Stats.fmt(after / (double) MiB),
                        Stats.fmt(r.deltaMiB()), Stats.fmt(r.bytesPerTask()), inFlight, r.maxInFlight(), r.pending(),
                        r.processing()));
                return r;
            } finally {
                release.countDown();
                sas.close();
                store.close();
            }
        } finally {
            Target.dropTables(pool, prefix);
            pool.close();
        }
    }

    private static void submitAll(SasRuntime sas, Workflow<String> wf, int n, int threads) throws Exception {
        ExecutorService ex = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> fs = new ArrayList<>();
            for (int k = 0; k < threads; k++) {
                int first = k;
                fs.add(ex.submit(() -> {
                    for (int i = first; i < n; i += threads) {
                        sas.client().submit(wf, "m" + i, "x").id();
                    }
                    return null;
                }));
            }
            for (Future<?> f : fs) {
                f.get();
            }
        } finally {
            ex.shutdownNow();
        }
    }

    /** Heap in use after full collections (the smallest of a few readings). */
    static long usedHeapAfterGc() throws InterruptedException {
        MemoryMXBean mx = ManagementFactory.getMemoryMXBean();
        long min = Long.MAX_VALUE;
        for (int i = 0; i < 4; i++) {
            mx.gc();
            Thread.sleep(50);
            min = Math.min(min, mx.getHeapMemoryUsage().getUsed());
        }
        return min;
    }
}
