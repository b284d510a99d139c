package dev.sas.jdbc;

import dev.sas.core.Codec;
import dev.sas.core.RetryPolicy;
import dev.sas.core.SasRuntime;
import dev.sas.core.StepContext;
import dev.sas.core.Workflow;
import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.function.Function;

/**
 * A separate JVM for {@link ChildTaskKillTest}: runs the parent workflow and the child workflow, whose
 * step here never finishes (it waits for the JVM to be killed), so the test kills this node while
 * its child runs and its parent awaits the child. Prints "child worker started", then runs until its
 * standard input closes. Arguments: JDBC URL, table prefix, instance id.
 */
final class ChildWorker {

    static final String PARENT = "kill-order";
    static final String CHILD = "kill-ship";
    /** How long one attempt at the child's step may take before the supervisor retries it elsewhere. */
    static final Duration CHILD_STEP_DEADLINE = Duration.ofSeconds(3);

    private ChildWorker() {
    }

    /** The child workflow: one step, "pack", whose work {@code pack} gives. */
    static Workflow<String> child(Function<StepContext<String>, String> pack) {
        return Workflow.builder(CHILD, Codec.string())
                .step("pack", s -> s.completeWithin(CHILD_STEP_DEADLINE).maxTimeouts(10)
                        .retry(RetryPolicy.builder().maxAttempts(10).fixedBackoff(Duration.ofMillis(200)).jitter(0).build())
                        .execute(pack::apply))
                .build();
    }

    /** reserve, ship (the child task), invoice. */
    static Workflow<String> parent(Workflow<String> child, Function<StepContext<String>, String> invoice) {
        return Workflow.builder(PARENT, Codec.string())
                .step("reserve", s -> s.execute(ctx -> "reserved " + ctx.input()))
                .step("ship", s -> s.childTask(child, ctx -> ctx.input() + "-parcel").completeWithin(Duration.ofMinutes(10)))
                .step("invoice", s -> s.execute(invoice::apply))
                .build();
    }

    public static void main(String[] args) throws IOException {
        CountDownLatch never = new CountDownLatch(1);
        Workflow<String> child = child(ctx -> {
            System.out.println("packing " + ctx.input() + " (never finishes here)");
            try {
                never.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return "never";
        });
        Workflow<String> parent = parent(child, ctx -> "invoice, " + ctx.output("ship").orElseThrow());
        try (JdbcStateStore store = JdbcStateStore.builder().url(args[0]).tablePrefix(args[1]).maxPoolSize(4).build();
                SasRuntime runtime = SasRuntime.builder().stateStore(store).workflow(parent).workflow(child)
                        .instanceId(args[2]).pollInterval(Duration.ofMillis(50))
                        .supervisorInterval(Duration.ofMillis(200)).build().start()) {
            System.out.println("child worker started");
            System.out.flush();
            while (System.in.read() >= 0) {
                // runs until the test closes stdin or kills it
            }
        }
    }
}
