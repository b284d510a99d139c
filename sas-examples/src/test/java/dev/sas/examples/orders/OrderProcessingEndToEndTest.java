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

        // With seed 7, Faults.fate puts 3 of the 50 orders on a blocked SKU (ERROR at the first step), 2 on a
        // declined card and 2 on a refused address (both compensated); transient faults never exhaust retries.
        assertThat(summary.compensated()).as("orders compensated after a declined card or a refused address")
                .isEqualTo(4);
        assertThat(summary.error()).as("blocked orders left in ERROR after one was resubmitted").isEqualTo(2);
        assertThat(summary.processed()).isEqualTo(44);
        assertThat(summary.resubmitted()).as("an order that was in ERROR").isNotNull();
        assertThat(summary.resubmittedStatus()).isEqualTo(TaskStatus.PROCESSED);
        assertThat(summary.alerts()).as("one alert per order that went to ERROR").isGreaterThanOrEqualTo(1);
        assertThat(summary.unavailable()).as("503s injected").isPositive();
        assertThat(summary.retries()).as("retries after the 503s").isPositive();
        assertThat(summary.checks().passed())
                .as("5 ledger checks, the resubmitted order, the breaker, the nightly reconciliation")
                .contains("no order failed for a passing reason (503s, hangs, the payment outage): every COMPENSATED"
                        + " or ERROR order met a permanent fault",
                        "the payment breaker opened during the outage and closed once the service was back",
                        "the nightly reconciliation schedule is registered once, every fire time and the operator's"
                                + " triggered run ran once, and the run counted every order row")
                .hasSize(8);
        assertThat(output).contains("operator: runs the nightly reconciliation now").contains("reconciliation: 50 order rows");
        // the default run takes the payment service down for 3 s: its breaker opens, orders wait, none fails
        assertThat(output).contains("OUTAGE: the payment service is down").contains("payment circuit breaker OPEN");
        assertThat(summary.outage()).contains("is CLOSED at the end").contains("calls held back instead of failing");
    }
}
