package dev.sas.reliability;

import dev.sas.core.Agent;
import dev.sas.core.AgentRequest;
import dev.sas.core.NonRetryableException;
import dev.sas.core.RetryPolicy;
import dev.sas.core.SasRuntime;
import dev.sas.core.TaskId;
import dev.sas.core.Workflow;
import dev.sas.reliability.HistoryChecker.Call;
import dev.sas.reliability.HistoryChecker.Cancel;
import dev.sas.reliability.HistoryChecker.Write;
import dev.sas.reliability.HistoryChecker.WriteKind;
import dev.sas.reliability.MutantStore.Mutant;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A quick chaos run in one JVM, for the mutation suite: three runtimes on one {@link MutantStore}
 * (each through its own {@link NodeStore}), the chaos workflow's three steps calling an in-memory
 * service that does <em>not</em> cooperate (it ignores the time it is given: some calls apply
 * their effect after their deadline, some apply it and then lose the reply), cancels timed to land
 * on running steps (calls last longer than the cancel delay), and a node's claims and writes
 * frozen four times until just past their deadlines; 120 tasks submitted over 6 s. The
 * {@link HistoryChecker} then judges the whole history, and the chaos run's stall check
 * ({@link MutationStalls}) the same calls. Seconds per run.
 */
final class MutationRun {
    static final List<String> STEPS = List.of(ChaosWorkflow.STEPS);
    static final Duration COMPLETE_WITHIN = Duration.ofSeconds(2);
    static final Duration SUPERVISOR_INTERVAL = Duration.ofMillis(200);
    static final int NODES = 3;
    /**
     * The chaos run's stall check here: {@link #COMPLETE_WITHIN} + 2 × {@link #SUPERVISOR_INTERVAL}
     * + this (3.4 s); it excuses queueing, so a loaded machine needs no more.
     */
    static final Duration STALL_SLACK = Duration.ofSeconds(1);

    /** The history checker's verdict and the chaos run's stall check over the same history. */
    record Outcome(HistoryChecker.Result history, ChaosReport stalls) {
    }

    private final Mutant mutant;
    private final int tasks;
    private final long seed;
    private final Clock db = Clock.systemUTC();
    private final MutantStore store;
    private final ExecutorService service = Executors.newFixedThreadPool(48, daemon("fake-service"));
    private final ScheduledExecutorService operator = Executors.newScheduledThreadPool(2, daemon("operator"));
    private final Object ledgerLock = new Object();
    private final List<Call> calls = new ArrayList<>();
    private final Map<String, Long> applied = new HashMap<>();
    private final List<Cancel> cancels = new ArrayList<>();
    private final Map<Long, String> outcomes = new HashMap<>();
    private final List<long[]> freezes = new ArrayList<>();
    private final AtomicLong callIds = new AtomicLong();

    MutationRun(Mutant mutant, int tasks, long seed) {
        this.mutant = mutant;
        this.tasks = tasks;
        this.seed = seed;
        this.store = new MutantStore(db, mutant);
    }

    private static java.util.concurrent.ThreadFactory daemon(String name) {
        return r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        };
    }

    /** Every 10th task (index 5, 15, ...) is declined at {@code settle} for good; it compensates. */
    static boolean declined(int index) {
        return index % 10 == 5;
    }

    /** Every 4th task (index 2, 6, ...) is cancelled once, 0–600 ms after its submission. */
    static boolean cancelled(int index) {
        return index % 4 == 2;
    }

    /** Runs it: submits, injects the faults, waits until every task is terminal or {@code maxWait}, checks. */
    Outcome run(Duration maxWait) throws InterruptedException {
        Random random = new Random(seed);
        List<SasRuntime> nodes = new ArrayList<>();
        List<NodeStore> views = new ArrayList<>();
        List<String> ids = new ArrayList<>();
        try {
            for (int n = 0; n < NODES; n++) {
                NodeStore view = store.forNode("n" + n);
                views.add(view);
                nodes.add(SasRuntime.builder().stateStore(view).clock(db).workflow(workflow())
                        .instanceId("n" + n).schedulerThreads(4).agentThreads(8).claimBatchSize(8).maxInFlight(16)
                        .pollInterval(Duration.ofMillis(50)).supervisorInterval(SUPERVISOR_INTERVAL)
                        .shutdownGrace(Duration.ofMillis(200)).build());
            }
            nodes.forEach(SasRuntime::start);
            // 6 s of submissions: longer than the stall bound plus a frozen supervisor, so a task left behind
            // early is passed over by work submitted after it (the chaos stall check's evidence)
            long spacingMs = 50;
            for (int i = 0; i < tasks; i++) {
                TaskId id = nodes.get(i % NODES).client().submit(workflow(), "t-" + i, String.valueOf(i)).id();
                ids.add(id.value());
                if (cancelled(i)) {
                    operator.schedule(() -> cancel(nodes.get(0), id), random.nextInt(600), TimeUnit.MILLISECONDS);
                }
                // not in the stall mutant's run: each freeze is passed to the stall check as a supervisor loss,
                // which adds its length to the bound of every wait it overlaps, and on a loaded machine (CI with
                // both cores busy) that left no task submitted late enough to show the shard's tasks passed over
                if (i > 0 && i % (tasks / 5) == 0 && mutant != Mutant.CLAIM_SKIPS_A_SHARD) {
                    // a node paused after the service applied its effects, before SAS recorded them,
                    // until just past their deadlines: its writes land while the supervisor recovers
                    // those steps and other nodes run them again
                    Duration frozen = COMPLETE_WITHIN.plusMillis(100);
                    views.get(random.nextInt(NODES)).freeze(frozen);
                    synchronized (ledgerLock) {
                        freezes.add(new long[] {db.millis(), db.millis() + frozen.toMillis()});
                    }
                }
                Thread.sleep(spacingMs); // submissions spread over the run, as an application would
            }
            long end = System.nanoTime() + maxWait.toNanos();
            while (System.nanoTime() < end && !allTerminal(ids)) {
                Thread.sleep(100);
            }
        } finally {
            operator.shutdownNow();
            nodes.forEach(SasRuntime::close);
            service.shutdown();
            // late calls of the non-cooperating service finish (they are part of the history)
            service.awaitTermination(10, TimeUnit.SECONDS);
        }
        return check(ids);
    }

    private boolean allTerminal(List<String> ids) {
        Map<String, String> states = store.states();
        return ids.stream().allMatch(id -> HistoryChecker.TERMINAL.contains(states.get(id)));
    }

    private void cancel(SasRuntime node, TaskId id) {
        try {
            boolean accepted = node.client().operations().cancel(id);
            long at = db.millis();
            synchronized (ledgerLock) {
                cancels.add(new Cancel(id.value(), at, accepted));
            }
        } catch (RuntimeException e) {
            // a cancel of a finished task may be refused with an exception: not accepted
            synchronized (ledgerLock) {
                cancels.add(new Cancel(id.value(), db.millis(), false));
            }
        }
    }

    Outcome check(List<String> ids) {
        List<Write> writes = store.writes();
        List<Cancel> recorded = new ArrayList<>();
        synchronized (ledgerLock) {
            for (Cancel c : cancels) {
                // the time the store recorded it, if it did; else the answer's arrival
                long at = c.at();
                if (c.accepted()) {
                    for (Write w : writes) {
                        if (w.kind() == WriteKind.CANCEL && w.task().equals(c.task())) {
                            at = w.at();
                            break;
                        }
                    }
                }
                recorded.add(new Cancel(c.task(), at, c.accepted()));
            }
        }
        List<Call> history;
        synchronized (ledgerLock) {
            history = List.copyOf(calls);
        }
        long bound = COMPLETE_WITHIN.toMillis() + 5_000; // a loaded 2-core CI machine
        Map<String, String> states = store.states();
        HistoryChecker.Result verdict = new HistoryChecker(STEPS, bound, SUPERVISOR_INTERVAL.toMillis() * 5 + 5_000)
                .check(ids, states, writes, history, recorded, List.of());
        ChaosReport stalls;
        synchronized (ledgerLock) {
            stalls = MutationStalls.check(ids, states, writes, history, Map.copyOf(outcomes), recorded,
                    List.copyOf(freezes), COMPLETE_WITHIN, SUPERVISOR_INTERVAL, STALL_SLACK);
        }
        return new Outcome(verdict, stalls);
    }

    // ------------------------------------------------------------------ the workflow and the service

    private Workflow<String> workflow;

    private synchronized Workflow<String> workflow() {
        if (workflow == null) {
            RetryPolicy retry = RetryPolicy.builder().maxAttempts(30)
                    .backoff(Duration.ofMillis(50), Duration.ofMillis(500), 2.0).jitter(0.2).build();
            Agent<String, String> agent = new Agent<>() {
                @Override
                public String name() {
                    return "fake-service";
                }

                @Override
                public RetryPolicy retryPolicy() {
                    return retry;
                }

                @Override
                public CompletionStage<String> call(AgentRequest<String> r) {
                    String key = mutant == Mutant.KEY_WITH_ATTEMPT ? r.idempotencyKey() + ":" + r.attempt()
                            : r.idempotencyKey();
                    int index = Integer.parseInt(r.payload());
                    return CompletableFuture.supplyAsync(() -> serve(r.taskId().value(), r.stepName(), "forward", key,
                            r.attempt(), r.remaining(), r.stepName().equals(STEPS.get(2)) && declined(index)), service);
                }
            };
            Workflow.Builder<String> b = Workflow.builder(ChaosWorkflow.NAME, dev.sas.core.Codec.string());
            for (String step : STEPS) {
                b.step(step, sb -> sb.call(agent, ctx -> ctx.input()).completeWithin(COMPLETE_WITHIN)
                        .compensateWithin(COMPLETE_WITHIN).retry(retry).compensationRetry(retry).maxTimeouts(20)
                        .compensateWith(ctx -> {
                            String key = mutant == Mutant.KEY_WITH_ATTEMPT ? ctx.idempotencyKey() + ":" + ctx.attempt()
                                    : ctx.idempotencyKey();
                            // the service runs on its own threads: a time-out here does not stop it
                            CompletableFuture.supplyAsync(() -> serve(ctx.taskId().value(), ctx.stepName(),
                                    "compensate", key, ctx.attempt(), ctx.remaining(), false), service).join();
                        }));
            }
            workflow = b.build();
        }
        return workflow;
    }

    /**
     * One call: it arrives, works 20–150 ms, applies its effect unless its key was applied, works
     * again, replies. It never looks at the time it was given: 3 % of calls apply their effect
     * after their deadline (and reply then), 4 % apply it and then fail (the reply is lost).
     */
    private String serve(String task, String step, String kind, String key, int attempt, Duration remaining,
            boolean decline) {
        long id = callIds.incrementAndGet();
        long start = db.millis();
        long window = remaining.toMillis();
        java.util.concurrent.ThreadLocalRandom random = java.util.concurrent.ThreadLocalRandom.current();
        int roll = random.nextInt(100);
        Long appliedAt = null;
        String outcome = Ledger.ERROR;
        try {
            sleep(random.nextInt(20, 150));
            if (decline) {
                outcome = Ledger.DECLINED;
                throw new NonRetryableException("the service declines " + task + " for good");
            }
            if (roll < 3) {
                sleep(window + 300); // ignores remaining(): applies late
            }
            synchronized (ledgerLock) {
                if (!applied.containsKey(key)) {
                    appliedAt = db.millis();
                    applied.put(key, appliedAt);
                }
            }
            sleep(random.nextInt(20, 150));
            if (roll >= 3 && roll < 7) {
                throw new IllegalStateException("the service's reply was lost");
            }
            outcome = Ledger.APPLIED;
            return "ok";
        } finally {
            Call c = new Call(id, task, step, kind, key, attempt, Thread.currentThread().getName(), start, db.millis(),
                    window, appliedAt);
            synchronized (ledgerLock) {
                calls.add(c);
                outcomes.put(id, outcome);
            }
        }
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms); // the service's own latency (a fault model), not a test waiting
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }
}
