package dev.sas.examples.orders;

import dev.sas.core.TaskStatus;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;

/**
 * What a run did and whether its ledgers check out. Immutable.
 *
 * @param orders orders placed
 * @param processed orders that ended PROCESSED (including the resubmitted one)
 * @param compensated orders that ended COMPENSATED
 * @param error orders still in ERROR at the end
 * @param other orders in any other state at the end (should be none)
 * @param retries failed attempts released for a retry, all runtimes
 * @param timeoutsRecovered expired claims recovered by a supervisor, all runtimes
 * @param deadlinesMissed attempts a scheduler stopped waiting for at their deadline
 * @param staleRejected replies and results rejected as stale (deadline passed or lease moved on)
 * @param replays calls the services answered from their idempotency cache (a retry not applied twice)
 * @param unavailable calls answered 503 by fault injection
 * @param hung calls that hung past the deadline by fault injection
 * @param rejected calls rejected for good (4xx)
 * @param alerts alerts the operator received
 * @param crash what the crash did, or null without one
 * @param outage what the payment outage did (the breaker, the calls held back), or null without one
 * @param resubmitted the order the operator resubmitted, or null
 * @param resubmittedStatus how that order ended, or null
 * @param untilTerminal time from the first order placed until every order was terminal
 * @param wallTime the whole run, including the operator's resubmission
 * @param database where the state and the orders were kept (no credentials)
 * @param dir the run's directory (H2 file, logs)
 * @param checks the ledger checks
 */
public record RunSummary(
        int orders,
        long processed,
        long compensated,
        long error,
        long other,
        long retries,
        long timeoutsRecovered,
        long deadlinesMissed,
        long staleRejected,
        long replays,
        long unavailable,
        long hung,
        long rejected,
        long alerts,
        String crash,
        String outage,
        String resubmitted,
        TaskStatus resubmittedStatus,
        Duration untilTerminal,
        Duration wallTime,
        String database,
        Path dir,
        LedgerCheck.Result checks) {

    /** True when every ledger check held. */
    public boolean ok() {
        return checks.ok();
    }

    /** Orders per second until every order was terminal. */
    public double ordersPerSecond() {
        double s = untilTerminal.toMillis() / 1000.0;
        return s <= 0 ? 0 : orders / s;
    }

    /** The summary table, as printed at the end of a run. */
    public String table() {
        StringBuilder sb = new StringBuilder();
        String rule = "+-----------------------------------------------+------------+\n";
        sb.append(rule);
        row(sb, "orders placed", orders);
        row(sb, "  processed", processed);
        row(sb, "  compensated (after a permanent fault)", compensated);
        row(sb, "  in error (left for the operator)", error);
        if (other > 0) {
            row(sb, "  not terminal (!)", other);
        }
        sb.append(rule);
        row(sb, "retries scheduled", retries);
        row(sb, "timeouts recovered by the supervisor", timeoutsRecovered);
        row(sb, "deadlines missed (attempt abandoned)", deadlinesMissed);
        row(sb, "stale replies rejected", staleRejected);
        row(sb, "retried calls answered once (idempotency)", replays);
        row(sb, "faults injected: 503 / hangs / rejections",
                unavailable + " / " + hung + " / " + rejected);
        row(sb, "operator alerts", alerts);
        sb.append(rule);
        row(sb, "wall time until all terminal", String.format(Locale.ROOT, "%.1f s", untilTerminal.toMillis() / 1000.0));
        row(sb, "orders/s", String.format(Locale.ROOT, "%.1f", ordersPerSecond()));
        row(sb, "wall time incl. operator action", String.format(Locale.ROOT, "%.1f s", wallTime.toMillis() / 1000.0));
        sb.append(rule);
        if (crash != null) {
            sb.append("crash: ").append(crash).append('\n');
        }
        if (outage != null) {
            sb.append("outage: ").append(outage).append('\n');
        }
        if (resubmitted != null) {
            sb.append("operator resubmitted order ").append(resubmitted).append(" after lifting its fault: ")
                    .append(resubmittedStatus).append('\n');
        }
        sb.append("database: ").append(database).append('\n');
        sb.append("run directory: ").append(dir).append('\n');
        sb.append("ledger checks:\n");
        for (String p : checks.passed()) {
            sb.append("  ok    ").append(p).append('\n');
        }
        for (String f : checks.failures()) {
            sb.append("  FAIL  ").append(f).append('\n');
        }
        sb.append(ok() ? "ALL CHECKS PASSED" : "CHECKS FAILED: " + checks.failures().size()).append('\n');
        return sb.toString();
    }

    private static void row(StringBuilder sb, String label, Object value) {
        sb.append(String.format(Locale.ROOT, "| %-45s | %10s |%n", label, value));
    }
}
