package dev.sas.jdbc;

import dev.sas.core.Codec;
import dev.sas.core.SasRuntime;
import dev.sas.core.StepRef;
import dev.sas.core.Workflow;
import java.io.IOException;
import java.time.Duration;

/**
 * A worker process for {@link CrossProcessClientTest}: runs {@link #WORKFLOW} on the store at
 * {@code args[0]} with table prefix {@code args[1]} until its standard input closes.
 */
public final class RemoteWorker {
    /** The first step: the trimmed input. */
    static final StepRef<String> TRIM = StepRef.of("trim");
    /** The last step: how many characters are left, a typed Integer output. */
    static final StepRef<Integer> LENGTH = StepRef.of("length", Codec.of(String::valueOf, Integer::valueOf));

    /** Two steps: trim the input, then count its characters. */
    static final Workflow<String> WORKFLOW = Workflow.builder("xjvm-lengths", Codec.string())
            .step(TRIM, s -> s.execute(ctx -> ctx.input().trim()))
            .step(LENGTH, s -> s.reads(TRIM).execute(ctx -> ctx.output(TRIM).length())
                    .completeWithin(Duration.ofSeconds(10)))
            .build();

    private RemoteWorker() {
    }

    /** Runs until standard input closes (the parent test ends or dies). */
    public static void main(String[] args) throws IOException {
        try (JdbcStateStore store = JdbcStateStore.builder().url(args[0]).tablePrefix(args[1]).build();
                SasRuntime runtime = SasRuntime.builder().stateStore(store).workflow(WORKFLOW)
                        .instanceId("remote-worker").pollInterval(Duration.ofMillis(50)).build().start()) {
            System.out.println("worker started");
            System.out.flush();
            while (System.in.read() >= 0) {
                // wait for the parent to close our standard input
            }
        }
    }
}
