package dev.sas.examples.orders;

import dev.sas.core.Agent;
import dev.sas.core.AgentRequest;
import dev.sas.core.FlowControl;
import dev.sas.core.NonRetryableException;
import dev.sas.core.RetryPolicy;
import dev.sas.examples.orders.services.Form;
import dev.sas.examples.orders.services.RemoteService;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * The {@link Agent} for one remote service of the shop, over the JDK {@link HttpClient}. Each call
 * carries the step's idempotency key in the {@code Idempotency-Key} header and times out at the
 * step's deadline ({@link AgentRequest#remaining()}). Answers map to the runtime's outcomes:
 * {@code 2xx} is the reply (its form body), {@code 5xx}, {@code 408}, {@code 429}, time-outs and
 * connection failures are retryable {@link RemoteServiceException}s or {@link IOException}s, and
 * any other {@code 4xx} is a {@link NonRetryableException} (a declined card is not going to be
 * accepted on the next try).
 *
 * <p>Compensations go through {@link #call} too ({@code compensateWith(agent, request)};
 * {@link AgentRequest#compensation()} is true). {@link #callNow} calls a service synchronously
 * outside a workflow.
 *
 * <p>Thread-safe.
 */
public final class ServiceAgent implements Agent<ServiceCall, String> {

    /** Retries for calls to the shop's services: 6 attempts, 50 ms doubling to 800 ms, ±20 %. */
    public static final RetryPolicy RETRY = RetryPolicy.builder()
            .maxAttempts(6)
            .backoff(Duration.ofMillis(50), Duration.ofMillis(800), 2.0)
            .jitter(0.2)
            .build();

    private final String name;
    private final URI base;
    private final HttpClient http;
    private final FlowControl flowControl;

    /**
     * @param name the agent's name (also its threads' and the logs')
     * @param base the service's address, e.g. {@code http://127.0.0.1:41234}
     * @param http the client, shared by the shop's agents
     * @throws NullPointerException if an argument is null
     */
    public ServiceAgent(String name, URI base, HttpClient http) {
        this(name, base, http, FlowControl.none());
    }

    /**
     * An agent whose calls go through {@code flowControl}: limits and a circuit breaker shared by
     * every runtime of the shop.
     *
     * @param name the agent's name (also its threads' and the logs')
     * @param base the service's address
     * @param http the client, shared by the shop's agents
     * @param flowControl the agent's limits and breaker
     * @throws NullPointerException if an argument is null
     */
    public ServiceAgent(String name, URI base, HttpClient http, FlowControl flowControl) {
        this.name = Objects.requireNonNull(name, "name must not be null");
        this.base = Objects.requireNonNull(base, "base must not be null");
        this.http = Objects.requireNonNull(http, "http must not be null");
        this.flowControl = Objects.requireNonNull(flowControl, "flowControl must not be null");
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public RetryPolicy retryPolicy() {
        return RETRY;
    }

    @Override
    public FlowControl flowControl() {
        return flowControl;
    }

    @Override
    public CompletionStage<String> call(AgentRequest<ServiceCall> request) {
        Duration timeout = request.remaining();
        if (timeout.isZero() || timeout.isNegative()) {
            return CompletableFuture.failedFuture(new HttpTimeoutException(
                    name + request.payload().path() + ": no time left before the step's deadline"));
        }
        return http.sendAsync(httpRequest(request.payload(), request.idempotencyKey(), timeout),
                        HttpResponse.BodyHandlers.ofString())
                .thenApply(response -> replyOf(request.payload(), response));
    }

    /**
     * Calls the service on the calling thread, for compensations.
     *
     * @param call the request
     * @param idempotencyKey the compensation's key ({@code ctx.idempotencyKey()})
     * @param timeout at most this long ({@code ctx.remaining()})
     * @return the reply's form body
     * @throws RemoteServiceException if the service is unavailable (retryable)
     * @throws NonRetryableException if it rejected the call
     * @throws IOException if the call failed or timed out (retryable)
     * @throws InterruptedException if the step's deadline interrupted the call
     */
    public String callNow(ServiceCall call, String idempotencyKey, Duration timeout)
            throws IOException, InterruptedException {
        if (timeout.isZero() || timeout.isNegative()) {
            throw new HttpTimeoutException(name + call.path() + ": no time left before the step's deadline");
        }
        return replyOf(call, http.send(httpRequest(call, idempotencyKey, timeout), HttpResponse.BodyHandlers.ofString()));
    }

    private HttpRequest httpRequest(ServiceCall call, String idempotencyKey, Duration timeout) {
        return HttpRequest.newBuilder(base.resolve(call.path()))
                .timeout(timeout)
                .header(RemoteService.IDEMPOTENCY_KEY, idempotencyKey)
                .header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString(Form.encode(call.fields())))
                .build();
    }

    private String replyOf(ServiceCall call, HttpResponse<String> response) {
        int status = response.statusCode();
        if (status / 100 == 2) {
            return response.body();
        }
        String error = Form.decode(response.body()).getOrDefault("error", "no detail");
        String message = name + call.path() + " answered HTTP " + status + ": " + error;
        if (status / 100 == 5 || status == 408 || status == 429) {
            throw new RemoteServiceException(message, status);
        }
        throw new NonRetryableException(message);
    }

    @Override
    public String toString() {
        return "ServiceAgent{" + name + " -> " + base + '}';
    }
}
