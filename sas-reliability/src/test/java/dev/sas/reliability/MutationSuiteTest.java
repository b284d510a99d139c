package dev.sas.reliability;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sas.reliability.HistoryChecker.Violation;
import dev.sas.reliability.MutantStore.Mutant;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The mutation suite of issue 31: a quick in-process chaos run ({@link MutationRun}) against the
 * correct store must pass the {@link HistoryChecker}, and against each bug of the table
 * ({@link MutantStore.Mutant}) must fail it. The chaos run's own stall check ({@link StallCheck},
 * through {@link MutationStalls}) judges the same histories: the correct store must pass it and the
 * stall mutants must fail it (a shard of tasks no node claims: tasks passed over; every claim late:
 * the cluster idle while tasks waited); for the other
 * mutants its verdict is printed, not asserted. Prints the table (mutant → caught?) and writes it to
 * {@code target/mutation-table.md}. The correct store runs alone; the mutants then run all at once
 * (each its own store, runtimes and service, in this JVM): each is caught by counts far from the
 * edge, and one after the other they took most of the module's time.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class MutationSuiteTest {
    private static final int TASKS = 120;
    /** Generous: a loaded 2-core machine; the correct store needs seconds. */
    private static final Duration MAX_WAIT = Duration.ofSeconds(90);
    /** A mutant may never finish its tasks (they count as lost); its own violations come first. */
    private static final Duration MUTANT_WAIT = Duration.ofSeconds(20);
    private static final Map<Mutant, String> ROWS = new EnumMap<>(Mutant.class);

    static {
        ROWS.put(Mutant.NONE, "none (the correct store)");
        ROWS.put(Mutant.NO_WRITE_FENCE, "transition write without the lease and deadline fence (rows 1-3)");
        ROWS.put(Mutant.CANCEL_NOT_SET, "`cancel` returns true but never sets the cancel request");
        ROWS.put(Mutant.CANCEL_RELEASES_CLAIM, "cancel releases a running claim to PENDING");
        ROWS.put(Mutant.EARLY_RECOVERY, "supervisor recovers claims 1.5 s before their deadline");
        ROWS.put(Mutant.CLAIM_IGNORES_LOCK, "claim without `locked_by IS NULL`");
        ROWS.put(Mutant.KEY_WITH_ATTEMPT, "idempotency key includes the attempt");
        ROWS.put(Mutant.CLAIM_SKIPS_A_SHARD, "claim sharded by task id hash, one shard without an owner");
        ROWS.put(Mutant.CLAIM_LATE, "claim " + MutantStore.LATE.toSeconds() + " s late (every task claimed, each late)");
    }

    private static final Map<Mutant, MutationRun.Outcome> RESULTS = new EnumMap<>(Mutant.class);

    @Test
    @Order(1)
    void the_correct_store_passes_the_history_checker_and_the_stall_check() throws InterruptedException {
        MutationRun.Outcome o = new MutationRun(Mutant.NONE, TASKS, 31).run(MAX_WAIT);
        RESULTS.put(Mutant.NONE, o);
        HistoryChecker.Result r = o.history();
        System.out.println("mutant NONE: " + r.summary() + "; stall check: " + stallSummary(o.stalls()));

        assertThat(r.passed()).as(r.summary()).isTrue();
        assertThat(o.stalls().stallViolations).as(stallSummary(o.stalls())).isZero();
    }

    private static String stallSummary(ChaosReport s) {
        return MutationStalls.verdict(s) + ", bound " + s.stallBoundMs + " ms, longest wait " + s.maxWaitMs + " ms ("
                + s.maxWaitTask + "), queued p99 " + s.p99QueuedMs + " ms" + (s.worstStalls.isEmpty() ? ""
                : "; worst: " + s.worstStalls.get(0));
    }

    /** The mutants' runs, started together at the first mutant's test (after the correct store's). */
    private static Map<Mutant, CompletableFuture<MutationRun.Outcome>> mutantRuns;

    private static synchronized CompletableFuture<MutationRun.Outcome> mutantRun(Mutant mutant) {
        if (mutantRuns == null) {
            mutantRuns = new EnumMap<>(Mutant.class);
            ExecutorService runs = Executors.newCachedThreadPool(r -> {
                Thread t = new Thread(r, "mutation-run");
                t.setDaemon(true);
                return t;
            });
            for (Mutant m : Mutant.values()) {
                if (m != Mutant.NONE) {
                    mutantRuns.put(m, CompletableFuture.supplyAsync(() -> {
                        try {
                            return new MutationRun(m, TASKS, 31).run(MUTANT_WAIT);
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                            throw new IllegalStateException("mutant " + m + " interrupted", e);
                        }
                    }, runs));
                }
            }
            runs.shutdown();
        }
        return mutantRuns.get(mutant);
    }

    @ParameterizedTest
    @EnumSource(value = Mutant.class, names = "NONE", mode = EnumSource.Mode.EXCLUDE)
    @Order(2)
    void each_bug_of_the_table_fails_the_history_checker(Mutant mutant) throws Exception {
        MutationRun.Outcome o = mutantRun(mutant).get(MAX_WAIT.toSeconds() * 2, java.util.concurrent.TimeUnit.SECONDS);
        RESULTS.put(mutant, o);
        HistoryChecker.Result r = o.history();
        System.out.println("mutant " + mutant + ": " + r.summary() + "; stall check: " + stallSummary(o.stalls()));

        assertThat(r.passed()).as("mutant " + mutant + " must be caught").isFalse();
        assertThat(r.counts.keySet()).as(r.summary()).containsAnyElementsOf(expected(mutant));
        if (mutant == Mutant.CLAIM_SKIPS_A_SHARD) {
            // the chaos run's own stall check, as it judges a JDBC run: the shard's tasks were passed over
            assertThat(o.stalls().stallsPassedOver).as(stallSummary(o.stalls())).isPositive();
        }
        if (mutant == Mutant.CLAIM_LATE) {
            // lateness alone, no task skipped: the chaos run's stall check sees the cluster idle while tasks waited
            assertThat(o.stalls().stallViolations).as(stallSummary(o.stalls())).isPositive();
        }
    }

    /** The violations that characterise each bug (others may come with it). */
    private static java.util.Set<Violation> expected(Mutant m) {
        return switch (m) {
            case NONE -> java.util.Set.of();
            case NO_WRITE_FENCE -> java.util.Set.of(Violation.LEASE_NOT_CURRENT, Violation.WRITE_AFTER_DEADLINE);
            case CANCEL_NOT_SET -> java.util.Set.of(Violation.CANCEL_IGNORED);
            case CANCEL_RELEASES_CLAIM -> java.util.Set.of(Violation.CLAIM_WHILE_HELD,
                    Violation.COMPENSATION_DURING_FORWARD);
            case EARLY_RECOVERY -> java.util.Set.of(Violation.EARLY_RECOVERY);
            case CLAIM_IGNORES_LOCK -> java.util.Set.of(Violation.CLAIM_WHILE_HELD, Violation.OVERLAP);
            case KEY_WITH_ATTEMPT -> java.util.Set.of(Violation.APPLIED_TWICE);
            case CLAIM_SKIPS_A_SHARD -> java.util.Set.of(Violation.STALL, Violation.LOST);
            case CLAIM_LATE -> java.util.Set.of(Violation.STALL);
        };
    }

    @AfterAll
    static void print_the_table() throws IOException {
        StringBuilder sb = new StringBuilder("| bug put into SAS | history checker | violations found | chaos stall check"
                + " (bound " + (MutationRun.COMPLETE_WITHIN.toMillis() + 2 * MutationRun.SUPERVISOR_INTERVAL.toMillis()
                + MutationRun.STALL_SLACK.toMillis()) + " ms) |\n|---|---|---|---|\n");
        for (Map.Entry<Mutant, String> row : ROWS.entrySet()) {
            MutationRun.Outcome o = RESULTS.get(row.getKey());
            HistoryChecker.Result r = o == null ? null : o.history();
            String verdict = r == null ? "not run" : row.getKey() == Mutant.NONE
                    ? (r.passed() ? "passed (as it must)" : "FAILED")
                    : (r.passed() ? "**passed it**" : "caught");
            String found = r == null ? "" : r.counts.entrySet().stream().map(e -> e.getKey() + " " + e.getValue())
                    .collect(Collectors.joining(", "));
            sb.append("| ").append(row.getValue()).append(" | ").append(verdict).append(" | ").append(found)
                    .append(" | ").append(o == null ? "" : MutationStalls.verdict(o.stalls())).append(" |\n");
        }
        System.out.println(sb);
        Path out = Path.of("target", "mutation-table.md");
        Files.createDirectories(out.getParent());
        Files.writeString(out, sb.toString());
    }
}
