package dev.sas.jdbc;

import dev.sas.core.Agent;
import dev.sas.core.AgentRequest;
import dev.sas.core.Codec;
import dev.sas.core.FlowControl;
import dev.sas.core.RetryPolicy;
import dev.sas.core.SasRuntime;
import dev.sas.core.Workflow;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * A worker JVM for {@link MultiJvmFlowTest}: runs {@link #workflow} on the store at {@code args[0]}
 * (table prefix {@code args[1]}) as instance {@code args[2]}, its agent calling the fake service at
 * {@code args[3]} over HTTP with at most {@code args[4]} calls in flight, {@code args[5]} calls per
 * second (0: no rate limit) and a permit lease of {@code args[6]} ms, until its standard input closes
 * or it is killed.
 */
public final class FlowWorker {
    private FlowWorker() {
    }

    /** The agent: POSTs the payload to the service; 2xx is the reply, anything else a retryable failure. */
    static Agent<String, String> agent(URI service, FlowControl flow) {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        return Agent.builder("payments")
                .retryPolicy(RetryPolicy.builder().maxAttempts(5).fixedBackoff(Duration.ofMillis(200)).jitter(0).build())
                .flowControl(flow)
                .call((AgentRequest<String> request) -> send(http, service, request));
    }

    private static CompletionStage<String> send(HttpClient http, URI service, AgentRequest<String> request) {
        HttpRequest post = HttpRequest.newBuilder(service.resolve("/call?endpoint=" + request.endpoint()))
                .timeout(request.remaining().isZero() ? Duration.ofMillis(1) : request.remaining())
                .POST(HttpRequest.BodyPublishers.ofString(request.payload())).build();
        return http.sendAsync(post, HttpResponse.BodyHandlers.ofString()).thenCompose(r -> r.statusCode() / 100 == 2
                ? CompletableFuture.completedFuture(r.body())
                : CompletableFuture.failedFuture(new IllegalStateException("service answered " + r.statusCode())));
    }

    /** One step calling the agent. */
    static Workflow<String> workflow(Agent<String, String> agent) {
        return Workflow.builder("xjvm-flow", Codec.string())
                .step("charge", s -> s.call(agent, ctx -> ctx.input()).completeWithin(Duration.ofSeconds(5)))
                .build();
    }

    /** The flow control of the arguments. */
    static FlowControl flow(int maxConcurrent, double perSecond, long leaseMs) {
        FlowControl.Builder b = FlowControl.builder().maxConcurrentCalls(maxConcurrent)
                .permitLease(Duration.ofMillis(leaseMs));
        if (perSecond > 0) {
            b.maxCallsPerSecond(perSecond).burst(5);
        }
        return b.build();
    }

    /** Runs until standard input closes (the parent test ends) or the process is killed. */
    public static void main(String[] args) throws IOException {
        FlowControl flow = flow(Integer.parseInt(args[4]), Double.parseDouble(args[5]), Long.parseLong(args[6]));
        Workflow<String> wf = workflow(agent(URI.create(args[3]), flow));
        try (JdbcStateStore store = JdbcStateStore.builder().url(args[0]).tablePrefix(args[1]).maxPoolSize(6).build();
                SasRuntime runtime = SasRuntime.builder().stateStore(store).workflow(wf).instanceId(args[2])
                        .schedulerThreads(4).agentThreads(8).claimBatchSize(8).maxInFlight(16)
                        .pollInterval(Duration.ofMillis(50)).supervisorInterval(Duration.ofMillis(500)).build()
                        .start()) {
            System.out.println("flow worker started");
            System.out.flush();
            while (System.in.read() >= 0) {
                // wait for the parent to close our standard input
            }
        }
    }
}
