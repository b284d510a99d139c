package dev.sas.rabbitmq;

import dev.sas.core.Codec;
import dev.sas.core.CompletionTokenKeys;
import dev.sas.core.RetryPolicy;
import dev.sas.core.Workflow;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/** The workflows of the multi-JVM tests: one step charging through the payment agent over RabbitMQ. */
final class PayFlows {
    /** Retries for a minute or more of broker trouble; time-outs bounded separately. */
    static final RetryPolicy PATIENT = RetryPolicy.builder().maxAttempts(100)
            .backoff(Duration.ofMillis(100), Duration.ofSeconds(2), 2.0).build();

    /** The reply token keys of every node in these tests. */
    static final CompletionTokenKeys KEYS = CompletionTokenKeys.builder()
            .currentKey("test", "the rabbit tests' reply token key, 32+ bytes".getBytes(StandardCharsets.UTF_8))
            .build();

    private PayFlows() {
    }

    /** {@code rabbit-pay}: the step "charge" sends the input to the agent and completes with its reply. */
    static Workflow<String> pay(RabbitAgent agent, Duration completeWithin) {
        return pay("rabbit-pay", agent, completeWithin);
    }

    /** The same, under another workflow name (a second deadline in the same test). */
    static Workflow<String> pay(String name, RabbitAgent agent, Duration completeWithin) {
        return Workflow.builder(name, Codec.string())
                .step("charge", s -> s.completeWithin(completeWithin).retry(PATIENT).maxTimeouts(5)
                        .awaitCompletion(agent.request(ctx -> ctx.input())))
                .build();
    }
}
