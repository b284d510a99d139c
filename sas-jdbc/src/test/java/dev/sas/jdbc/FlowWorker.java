package dev.sas.jdbc;

import dev.sas.core.Agent;
import dev.sas.core.AgentRequest;
import dev.sas.core.Codec;
import dev.sas.core.FlowControl;
import dev.sas.core.RetryPolicy;
import dev.sas.core.RuntimeBuilder;
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
 * A worker JVM for {@link MultiJvmFlowTest}: runs the workflows of {@link #workflows} on the store at
 * {@code args[0]} (table prefix {@code args[1]}) as instance {@code args[2]}, their agents calling
 * the fake service at {@code args[3]} over HTTP, until its standard input closes or it is killed.
 */
public final class FlowWorker {
    private FlowWorker() {
    }

    /** A workflow whose agent is limited to 5 calls in flight. */
    static final String CAPACITY = "capacity";
    /** A workflow whose agent is limited to 50 calls per second (burst 5). */
    static final String RATE = "rate";
    /** A workflow whose agent is limited to 2 calls in flight, with a permit lease of 2 s. */
    static final String KILL = "kill";
    /** The request header carrying when the runtime made the call, in database time (ISO-8601). */
    static final String STARTED_HEADER = "X-Sas-Started";
    /**
     * How long a step has: long enough that a machine at load 30 does not run the tasks out of
     * attempts by missed deadlines (a 20 ms call), which would say nothing about the limits; {@link
     * #KILL}'s holds its calls open while a test runs, and its killed node's permits count until a
     * lease past that deadline, so it is shorter: the test waits that long after the kill, and 20 s
     * still leaves the survivor time to start and be held back before the deadline on a loaded machine.
     */
    static Duration completeWithin(String name) {
        return name.equals(KILL) ? Duration.ofSeconds(20) : Duration.ofSeconds(60);
    }

    /** The flow control of each workflow's agent. */
    static FlowControl flow(String name) {
        return switch (name) {
            case CAPACITY -> FlowControl.builder().maxConcurrentCalls(5).build();
            case RATE -> FlowControl.builder().maxCallsPerSecond(50).burst(5).build();
            case KILL -> FlowControl.builder().maxConcurrentCalls(2).permitLease(Duration.ofSeconds(2)).build();
            default -> throw new IllegalArgumentException(name);
        };
    }

    /** The three workflows, each calling its own agent at {@code <service>/<name>}. */
    static java.util.Map<String, Workflow<String>> workflows(URI service) {
        java.util.Map<String, Workflow<String>> out = new java.util.LinkedHashMap<>();
        for (String name : new String[] {CAPACITY, RATE, KILL}) {
            out.put(name, workflow(name, agent(name, service, flow(name)), completeWithin(name)));
        }
        return out;
    }

    /** The agent: POSTs the payload to the service; 2xx is the reply, anything else a retryable failure. */
    static Agent<String, String> agent(String name, URI service, FlowControl flow) {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        return Agent.builder(name)
                .retryPolicy(RetryPolicy.builder().maxAttempts(5).fixedBackoff(Duration.ofMillis(200)).jitter(0).build())
                .flowControl(flow)
                .call((AgentRequest<String> request) -> send(http, service.resolve("/" + name), request));
    }

    private static CompletionStage<String> send(HttpClient http, URI service, AgentRequest<String> request) {
        HttpRequest post = HttpRequest.newBuilder(service)
                .timeout(request.remaining().isZero() ? Duration.ofMillis(1) : request.remaining())
                .header(STARTED_HEADER, request.completeBy().minus(request.remaining()).toString())
                .POST(HttpRequest.BodyPublishers.ofString(request.payload())).build();
        return http.sendAsync(post, HttpResponse.BodyHandlers.ofString()).thenCompose(r -> r.statusCode() / 100 == 2
                ? CompletableFuture.completedFuture(r.body())
                : CompletableFuture.failedFuture(new IllegalStateException("service answered " + r.statusCode())));
    }

    /** One step calling the agent. */
    static Workflow<String> workflow(String name, Agent<String, String> agent, Duration completeWithin) {
        return Workflow.builder("xjvm-" + name, Codec.string())
                .step("charge", s -> s.call(agent, ctx -> ctx.input()).completeWithin(completeWithin))
                .build();
    }

    /** Runs until standard input closes (the parent test ends) or the process is killed. */
    public static void main(String[] args) throws IOException {
        try (JdbcStateStore store = JdbcStateStore.builder().url(args[0]).tablePrefix(args[1]).maxPoolSize(6).build()) {
            RuntimeBuilder b = SasRuntime.builder().stateStore(store).instanceId(args[2]).schedulerThreads(4)
                    .agentThreads(8).claimBatchSize(8).maxInFlight(16).pollInterval(Duration.ofMillis(50))
                    .supervisorInterval(Duration.ofMillis(500));
            workflows(URI.create(args[3])).values().forEach(b::workflow);
            try (SasRuntime runtime = b.build().start()) {
                System.out.println("flow worker started");
                System.out.flush();
                while (System.in.read() >= 0) {
                    // wait for the parent to close our standard input
                }
            }
        }
    }
}
