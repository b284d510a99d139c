package dev.sas.testing.contracts;

import dev.sas.core.spi.StateStore;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

/**
 * The store lifecycle shared by the contract suites: a fresh store from {@link #createStore()}
 * before each test, {@link #destroyStore(StateStore)} after it.
 */
public abstract class StoreTestSupport {

    /** The store under test, fresh for each test. */
    protected StateStore store;

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

    @AfterEach
    void tearDownStore() throws Exception {
        beforeStoreIsDestroyed();
        if (store != null) {
            destroyStore(store);
        }
    }

    /** Hook for subclasses that hold resources on the store (runtimes) to release them first. */
    void beforeStoreIsDestroyed() throws Exception {
    }
}
