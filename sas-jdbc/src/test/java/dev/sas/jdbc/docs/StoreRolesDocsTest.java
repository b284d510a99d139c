package dev.sas.jdbc.docs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sas.core.spi.StateStore;
import dev.sas.jdbc.JdbcStateStore;
import dev.sas.testing.InMemoryStateStore;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The store roles of docs/concepts.md ("Stores: one interface, optional roles"), asked of the built-in stores. */
class StoreRolesDocsTest {

    static Map<String, Boolean> roles(StateStore store) {
        Map<String, Boolean> kept = new LinkedHashMap<>();
        // tag::roles[]
        kept.put("statusOutbox", store.statusOutbox().isPresent());       // status channels
        kept.put("stepCompletions", store.stepCompletions().isPresent()); // steps that await completion
        kept.put("claimedSubmits", store.claimedSubmits().isPresent());   // a local submit starts without a claim
        kept.put("deployments", store.deployments().isPresent());         // parking what no live runtime runs
        kept.put("versionMoves", store.versionMoves().isPresent());       // moving a task to another version
        kept.put("schedules", store.schedules().isPresent());             // recurring schedules
        kept.put("flowControl", store.flowControl().isPresent());         // agents' limits and breakers
        kept.put("signals", store.signals().isPresent());                 // cross-node wake-up hints
        // end::roles[]
        return kept;
    }

    @Test
    void the_h2_and_in_memory_stores_keep_every_role_but_signals() {
        try (JdbcStateStore h2 = JdbcStateStore.builder().url("jdbc:h2:mem:store-roles;DB_CLOSE_DELAY=-1").build()) {
            assertThat(roles(h2)).containsExactly(Map.entry("statusOutbox", true), Map.entry("stepCompletions", true),
                    Map.entry("claimedSubmits", true), Map.entry("deployments", true), Map.entry("versionMoves", true),
                    Map.entry("schedules", true), Map.entry("flowControl", true), Map.entry("signals", false));
        }
        assertThat(roles(new InMemoryStateStore())).containsExactly(Map.entry("statusOutbox", true),
                Map.entry("stepCompletions", true), Map.entry("claimedSubmits", true), Map.entry("deployments", true),
                Map.entry("versionMoves", true), Map.entry("schedules", true), Map.entry("flowControl", true),
                Map.entry("signals", false));
    }

    @Test
    void a_store_that_declares_only_the_core_keeps_no_role() {
        StateStore core = (StateStore) java.lang.reflect.Proxy.newProxyInstance(StateStore.class.getClassLoader(),
                new Class<?>[] {StateStore.class}, (proxy, method, args) -> {
                    if (method.isDefault()) {
                        return java.lang.reflect.InvocationHandler.invokeDefault(proxy, method, args);
                    }
                    throw new UnsupportedOperationException(method.getName());
                });
        assertThat(roles(core)).containsOnlyKeys("statusOutbox", "stepCompletions", "claimedSubmits", "deployments",
                "versionMoves", "schedules", "flowControl", "signals").doesNotContainValue(true);
    }
}
