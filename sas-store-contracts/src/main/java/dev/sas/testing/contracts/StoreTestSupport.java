package dev.sas.testing.contracts;

import dev.sas.core.AlertSink;
import dev.sas.core.CompletionTokenKeys;
import dev.sas.core.RuntimeBuilder;
import dev.sas.core.SasRuntime;
import dev.sas.core.Workflow;
import dev.sas.core.spi.StateStore;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * The store lifecycle shared by the contract suites: a fresh store from {@link #createStore()}
 * before each test, {@link #destroyStore(StateStore)} after it.
 */
public abstract class StoreTestSupport {

    /** The key that signs the completion tokens of the runtimes from {@link #runtimeOn}. */
    static final CompletionTokenKeys TEST_KEYS = CompletionTokenKeys.builder()
            .currentKey("k1", "a key of thirty-two bytes or more!".getBytes(StandardCharsets.UTF_8)).build();

    /** The store under test, fresh for each test. */
    protected StateStore store;
    private final List<SasRuntime> runtimes = new ArrayList<>();

    /** A new, empty store. Called before each test. */
    protected abstract StateStore createStore() throws Exception;

    /** Releases what {@link #createStore()} made. Called after each test; closes the store by default. */
    protected void destroyStore(StateStore store) throws Exception {
        store.close();
    }

    @BeforeEach
    void setUpStore() throws Exception {
        store = createStore();
    }

    /**
     * One runtime, {@code node-a}, on the store under test with {@code clock} as its time (trusted:
     * the test drives it), signing completion tokens with {@link #TEST_KEYS}; closed after the test,
     * before the store.
     */
    SasRuntime runtimeOn(Clock clock, Workflow<?> workflow) {
        return kept(runtimeBuilder(clock, workflow));
    }

    /** As {@link #runtimeOn(Clock, Workflow)}, sending alerts to {@code alerts}. */
    SasRuntime runtimeOn(Clock clock, Workflow<?> workflow, AlertSink alerts) {
        return kept(runtimeBuilder(clock, workflow).alertSink(alerts));
    }

    /** As {@link #runtimeOn(Clock, Workflow)}, with {@code settings} applied to the builder last. */
    SasRuntime runtimeWith(Clock clock, Workflow<?> workflow, UnaryOperator<RuntimeBuilder> settings) {
        return kept(settings.apply(runtimeBuilder(clock, workflow)));
    }

    private RuntimeBuilder runtimeBuilder(Clock clock, Workflow<?> workflow) {
        return SasRuntime.builder().stateStore(store).clock(clock).trustLocalClock().instanceId("node-a")
                .completionTokenKeys(TEST_KEYS).workflow(workflow);
    }

    private SasRuntime kept(RuntimeBuilder builder) {
        SasRuntime sas = builder.build();
        runtimes.add(sas);
        return sas;
    }

    @AfterEach
    void tearDownStore() throws Exception {
        runtimes.forEach(SasRuntime::close);
        runtimes.clear();
        beforeStoreIsDestroyed();
        if (store != null) {
            destroyStore(store);
        }
    }

    /** Hook for subclasses that hold resources on the store (runtimes) to release them first. */
    void beforeStoreIsDestroyed() throws Exception {
    }
}
