package dev.sas.reliability;

import dev.sas.core.Agent;
import dev.sas.core.AgentRequest;
import dev.sas.core.Compensation;
import dev.sas.core.CompletionOutcome;
import dev.sas.core.CompletionTokenKeys;
import dev.sas.core.NonRetryableException;
import dev.sas.core.RetryPolicy;
import dev.sas.core.SasClient;
import dev.sas.core.StepContext;
import dev.sas.core.Workflow;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The workflow every worker runs: three steps ({@code reserve}, {@code debit}, {@code settle}),
 * each a call through {@link LedgerAgent} with the step's idempotency key, each compensated by
 * a ledger call with the compensation's key. The input is the task's index ({@link ChaosInput},
 * whose poison variants cannot be decoded); {@code settle} declines some indexes for good
 * ({@link ChaosSettings#failsForGood}), so those tasks compensate. With
 * {@link ChaosSettings#awaitReply} a fourth step, {@code confirm}, awaits a reply: its request
 * goes to the ledger service, which applies the step's effect and later delivers the completion
 * through the worker's client ({@link LedgerAgent#requestConfirmation}).
 */
final class ChaosWorkflow {
    static final String NAME = "chaos-transfer";
    static final String[] STEPS = {"reserve", "debit", "settle"};
    /** The step that awaits a reply ({@link ChaosSettings#awaitReply}), after {@link #STEPS}. */
    static final String AWAITING_STEP = "confirm";
    static final int MAX_TIMEOUTS = 10;
    /**
     * The harness's reply-token key, the same in every worker JVM: a test key, not a secret (the
     * harness's workers and their ledger are its only holders).
     */
    static final CompletionTokenKeys KEYS = CompletionTokenKeys.builder()
            .currentKey("chaos", "sas-reliability chaos harness key (test only)".getBytes(StandardCharsets.UTF_8))
            .build();

    private ChaosWorkflow() {
    }

    /** Retries transient failures (the database restarting, connections killed) for a while. */
    static RetryPolicy retryPolicy() {
        return RetryPolicy.builder().maxAttempts(30).backoff(Duration.ofMillis(50), Duration.ofSeconds(1), 2.0)
                .jitter(0.2).build();
    }

    /** The workflow; {@code agent} and {@code ledger} may be null where nothing runs (the coordinator). */
    static Workflow<String> create(LedgerAgent agent, Ledger ledger, ChaosSettings s) {
        return create(agent, ledger, s, null);
    }

    /** The workflow, with faults at chosen points (null: none). */
    static Workflow<String> create(LedgerAgent agent, Ledger ledger, ChaosSettings s, FaultPoints faults) {
        Workflow.Builder<String> b = Workflow.builder(NAME, ChaosInput.CODEC);
        Agent<String, String> a = agent != null ? agent : LedgerAgent.unusable();
        Compensation<String> undo = ctx -> {
            if (ledger == null) {
                throw new IllegalStateException("no ledger in this process");
            }
            long deadline = System.nanoTime() + ctx.remaining().toNanos();
            String outcome = ledger.execute(ctx.idempotencyKey(), ctx.taskId().value(), ctx.stepName(),
                    "compensate", ctx.attempt(), deadline, () -> LedgerAgent.pause(s));
            if (faults != null && outcome.equals(Ledger.APPLIED)) {
                faults.at(FaultPoints.Point.COMPENSATION, ctx.taskId(), ctx.stepName());
            }
            LedgerAgent.refuseLate(outcome, ctx.stepName(), ctx.attempt());
            LedgerAgent.pause(s);
        };
        for (String step : STEPS) {
            b.step(step, sb -> sb.call(a, ctx -> ctx.input())
                    .completeWithin(s.completeWithin)
                    .retry(retryPolicy())
                    .maxTimeouts(MAX_TIMEOUTS)
                    .compensateWith(undo));
        }
        if (s.awaitReply) {
            b.step(AWAITING_STEP, sb -> sb.awaitCompletion((ctx, token) -> {
                if (agent == null) {
                    throw new IllegalStateException("no ledger in this process");
                }
                agent.requestConfirmation(ctx, token);
            })
                    .completeWithin(s.completeWithin)
                    .retry(retryPolicy())
                    .maxTimeouts(MAX_TIMEOUTS)
                    .compensateWith(undo));
        }
        return b.build();
    }

    /**
     * Calls the ledger on the worker's own "network" pool, so that a reply held back past the
     * deadline really arrives late (the runtime cancelling its future does not stop the service).
     */
    static final class LedgerAgent implements Agent<String, String> {
        private final Ledger ledger;
        private final ExecutorService service;
        private final ChaosSettings s;
        private final FaultPoints faults;
        /** Delivers the awaiting step's completions: the worker's runtime's client, set once it is built. */
        private volatile SasClient completions;

        LedgerAgent(Ledger ledger, ExecutorService service, ChaosSettings s, FaultPoints faults) {
            this.ledger = ledger;
            this.service = service;
            this.s = s;
            this.faults = faults;
        }

        /** The client through which the service delivers the awaiting step's completions. */
        void completeThrough(SasClient client) {
            this.completions = client;
        }

        /**
         * The awaiting step's request: the service applies the step's effect under its idempotency
         * key while the request is sent (so the call, like every other, runs under the step's
         * claim, and a cancel that finds the task awaiting compensates an effect already applied),
         * then delivers the completion with the token later, from its own pool, like a partner
         * system answering a webhook. The {@code completion} fault point strikes there: the effect
         * is applied, the completion not yet delivered.
         */
        void requestConfirmation(StepContext<String> ctx, String token) throws Exception {
            long deadline = System.nanoTime() + ctx.remaining().toNanos();
            String task = ctx.taskId().value();
            int attempt = ctx.attempt();
            String outcome = ledger.execute(ctx.idempotencyKey(), task, AWAITING_STEP, "forward", attempt, deadline,
                    () -> pause(s));
            refuseLate(outcome, AWAITING_STEP, attempt);
            service.execute(() -> {
                try {
                    if (outcome.equals(Ledger.APPLIED)) {
                        faults.at(FaultPoints.Point.COMPLETION, ctx.taskId(), AWAITING_STEP);
                    }
                    pause(s);
                    deliver(token, outcome, task, attempt);
                } catch (Throwable e) {
                    // not delivered: the step times out and its request is sent again
                    System.err.println("completion of task " + task + " attempt " + attempt + " failed: " + e);
                }
            });
        }

        /**
         * Delivers one completion, retried while the store cannot be reached (at least once, as a
         * reply sender would); a refusal ({@code LATE}, {@code STALE}) is the answer, not retried:
         * a frozen node's completion arrives after the deadline and must change nothing.
         */
        private void deliver(String token, String outcome, String task, int attempt) throws InterruptedException {
            for (int i = 1; ; i++) {
                try {
                    CompletionOutcome answer = completions.stepCompletion().complete(token, outcome);
                    if (!answer.accepted()) {
                        // counted by the run as reply-refused:<outcome> (not a fault: the store's answer)
                        faults.record("reply-refused", answer.name().toLowerCase(Locale.ROOT), task, AWAITING_STEP, 0);
                    }
                    return;
                } catch (dev.sas.core.StateStoreException e) {
                    if (i >= 40) {
                        throw e;
                    }
                    Thread.sleep(250);
                }
            }
        }

        static Agent<String, String> unusable() {
            return new Agent<>() {
                @Override
                public String name() {
                    return "ledger";
                }

                @Override
                public CompletionStage<String> call(AgentRequest<String> request) {
                    return CompletableFuture.failedFuture(new IllegalStateException("no ledger in this process"));
                }
            };
        }

        static void pause(ChaosSettings s) throws InterruptedException {
            int min = s.ledgerLatencyMinMs;
            int max = Math.max(min, s.ledgerLatencyMaxMs);
            if (max > 0) {
                Thread.sleep(ThreadLocalRandom.current().nextInt(min, max + 1));
            }
        }

        /** A refused call is a failure (retried), never a reply that the step may record as done. */
        static void refuseLate(String outcome, String step, int attempt) {
            if (outcome.equals(Ledger.LATE)) {
                throw new IllegalStateException("ledger refused " + step + " attempt " + attempt
                        + ": its deadline had passed on the database clock");
            }
        }

        @Override
        public String name() {
            return "ledger";
        }

        @Override
        public RetryPolicy retryPolicy() {
            return ChaosWorkflow.retryPolicy();
        }

        @Override
        public CompletionStage<String> call(AgentRequest<String> r) {
            CompletableFuture<String> reply = new CompletableFuture<>();
            long deadline = System.nanoTime() + r.remaining().toNanos();
            service.execute(() -> {
                try {
                    reply.complete(serve(r, deadline));
                } catch (Throwable e) {
                    reply.completeExceptionally(e);
                }
            });
            return reply;
        }

        private String serve(AgentRequest<String> r, long deadline) throws Exception {
            int index = Integer.parseInt(r.payload());
            boolean applyLate = s.lateApplyPerMille > 0 && ThreadLocalRandom.current().nextInt(1000) < s.lateApplyPerMille;
            faults.at(FaultPoints.Point.START_RECORD, r.taskId(), r.stepName());
            String outcome = ledger.execute(r.idempotencyKey(), r.taskId().value(), r.stepName(), "forward",
                    r.attempt(), deadline, () -> {
                        pause(s);
                        if (applyLate) {
                            // ignores remaining(): works on past the deadline, then applies the effect
                            long past = deadline - System.nanoTime() + 300_000_000L;
                            if (past > 0) {
                                Thread.sleep(past / 1_000_000);
                            }
                        }
                        if (r.stepName().equals(STEPS[2]) && ChaosSettings.failsForGood(index, s.failEvery)) {
                            throw new NonRetryableException("ledger declines task " + index + " for good");
                        }
                    });
            if (outcome.equals(Ledger.APPLIED)) {
                faults.at(FaultPoints.Point.AFTER_EFFECT, r.taskId(), r.stepName());
            }
            refuseLate(outcome, r.stepName(), r.attempt());
            if (r.attempt() == 1 && s.slowPerMille > 0 && ThreadLocalRandom.current().nextInt(1000) < s.slowPerMille) {
                // the effect is applied, but the reply comes back after the step's deadline
                Thread.sleep(s.completeWithin.toMillis() + 500);
            }
            pause(s);
            return outcome;
        }
    }
}
