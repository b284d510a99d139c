package dev.sas.examples.orders;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sas.core.TaskStatus;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class OrderProcessingEndToEndTest {

    @TempDir
    Path dir;

    @Test
    void fifty_orders_with_faults_a_crash_and_a_payment_outage_all_end_terminal_and_the_ledgers_agree() throws Exception {
        ByteArrayOutputStream console = new ByteArrayOutputStream();
        RunSummary summary = OrderRun.run(RunConfig.parse("--orders", "50", "--seed", "7", "--crash=in-process",
                "--dir", dir.toString()), new PrintStream(console, true, StandardCharsets.UTF_8));
        String output = console.toString(StandardCharsets.UTF_8);

        assertThat(summary.checks().failures()).as(output + summary.table()).isEmpty();
        assertThat(summary.ok()).isTrue();
        assertThat(summary.other()).as("orders not terminal").isZero();
        assertThat(summary.processed() + summary.compensated() + summary.error()).isEqualTo(50);
        assertThat(summary.crash()).contains("closed abruptly");
        assertThat(output).contains("CRASH:");

        // With seed 7, Faults.fate puts 3 of the 50 orders on a blocked SKU, 2 on a declined card and 2 on a refused
        // address; transient faults never exhaust retries. Stock and payment are parallel branches: a blocked SKU fails
        // the stock branch, the payment branch is cancelled and its charge, if made, refunded, so the order ends
        // COMPENSATED (before the branches it ended ERROR at the first step and was resubmitted by the operator).
        assertThat(summary.compensated()).as("orders compensated after a blocked SKU, a declined card or a refused"
                + " address").isEqualTo(7);
        assertThat(summary.error()).as("no order is left in ERROR: a failed branch compensates").isZero();
        assertThat(summary.processed()).isEqualTo(43);
        assertThat(summary.resubmitted()).as("nothing in ERROR to resubmit").isNull();
        assertThat(summary.unavailable()).as("503s injected").isPositive();
        assertThat(summary.retries()).as("retries after the 503s").isPositive();
        assertThat(summary.checks().passed())
                .as("8 ledger checks (2 of the parcels), the breaker, the nightly reconciliation")
                .contains("no order failed for a passing reason (503s, hangs, the payment outage): every COMPENSATED"
                        + " or ERROR order met a permanent fault",
                        "no order charged or reserved twice",
                        "every parcel of a PROCESSED order shipped, none cancelled",
                        "the payment breaker opened during the outage and closed once the service was back",
                        "the nightly reconciliation schedule is registered once, every fire time and the operator's"
                                + " triggered run ran once, and the run counted every order row")
                .anySatisfy(c -> assertThat(c).startsWith("every charge of a failed order refunded once and no"
                        + " reservation left held, whichever parallel branch failed"))
                .anySatisfy(c -> assertThat(c).startsWith("no parcel shipped twice ("))
                .hasSize(10);
        assertThat(output).contains("operator: runs the nightly reconciliation now").contains("reconciliation: 50 order rows");
        // the default run takes the payment service down for 3 s: its breaker opens, orders wait, none fails
        assertThat(output).contains("OUTAGE: the payment service is down").contains("payment circuit breaker OPEN");
        assertThat(summary.outage()).contains("is CLOSED at the end").contains("calls held back instead of failing");
    }
}
