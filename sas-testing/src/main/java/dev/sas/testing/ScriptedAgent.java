package dev.sas.testing;

import dev.sas.core.Agent;
import dev.sas.core.AgentRequest;
import dev.sas.core.RetryPolicy;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * A fault-injecting {@link Agent} for tests: each call takes the next scripted behaviour (reply,
 * fail, throw, hang), or the default once the script is used up. It models a remote service that
 * honours idempotency keys: {@link #effects()} counts each key once, however often it was called,
 * while {@link #calls()} lists every raw call. Thread-safe.
 */
public final class ScriptedAgent implements Agent<String, String> {

    private final String name;
    private final RetryPolicy retryPolicy;
    private final Deque<Supplier<CompletionStage<String>>> script = new ArrayDeque<>();
    private Supplier<CompletionStage<String>> fallback;
    private final List<AgentRequest<String>> calls = new ArrayList<>();
    private final List<CompletableFuture<String>> hanging = new ArrayList<>();
    private final Map<String, String> effects = new ConcurrentHashMap<>();

    /**
     * An agent that, unless scripted otherwise, replies {@code "ok:" + payload}.
     *
     * @throws NullPointerException if an argument is null
     */
    public ScriptedAgent(String name, RetryPolicy retryPolicy) {
        this.name = Objects.requireNonNull(name, "name must not be null");
        this.retryPolicy = Objects.requireNonNull(retryPolicy, "retryPolicy must not be null");
        this.fallback = null;
    }

    /** Next call replies {@code value} (and records the effect under its idempotency key). */
    public synchronized ScriptedAgent thenReply(String value) {
        script.add(() -> CompletableFuture.completedFuture(value));
        return this;
    }

    /** Next call completes exceptionally with {@code error}. */
    public synchronized ScriptedAgent thenFail(RuntimeException error) {
        script.add(() -> CompletableFuture.failedFuture(error));
        return this;
    }

    /** Next call throws {@code error} from {@code call} itself. */
    public synchronized ScriptedAgent thenThrow(RuntimeException error) {
        script.add(() -> {
            throw error;
        });
        return this;
    }

    /** Next call never replies until the test completes it via {@link #hanging()}. */
    public synchronized ScriptedAgent thenHang() {
        script.add(() -> {
            CompletableFuture<String> f = new CompletableFuture<>();
            synchronized (this) {
                hanging.add(f);
            }
            return f;
        });
        return this;
    }

    /** Once the script is used up, every call fails with {@code error}. */
    public synchronized ScriptedAgent otherwiseFail(RuntimeException error) {
        fallback = () -> CompletableFuture.failedFuture(error);
        return this;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public RetryPolicy retryPolicy() {
        return retryPolicy;
    }

    @Override
    public CompletionStage<String> call(AgentRequest<String> request) {
        Supplier<CompletionStage<String>> next;
        synchronized (this) {
            calls.add(request);
            next = script.poll();
            if (next == null) {
                next = fallback;
            }
        }
        CompletionStage<String> reply = next != null ? next.get()
                : CompletableFuture.completedFuture("ok:" + request.payload());
        return reply.thenApply(r -> {
            effects.putIfAbsent(request.idempotencyKey(), r);
            return r;
        });
    }

    /** Every raw call, in order. */
    public synchronized List<AgentRequest<String>> calls() {
        return List.copyOf(calls);
    }

    /** Replies the service applied, one per idempotency key. */
    public Map<String, String> effects() {
        return Map.copyOf(effects);
    }

    /** Calls that are hanging, in order; complete one to simulate a late reply. */
    public synchronized List<CompletableFuture<String>> hanging() {
        return List.copyOf(hanging);
    }
}
