package dev.sas.core.internal;

import dev.sas.core.Workflow;
import dev.sas.core.spi.WorkflowVersion;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/** The workflows a runtime knows, by name and version. Immutable after construction. */
public final class Registry {
    private final Map<String, Workflow<?>> byKey = new HashMap<>();
    private final Set<WorkflowVersion> runnable;

    /**
     * @throws IllegalArgumentException if two workflows share name and version
     */
    public Registry(List<Workflow<?>> workflows) {
        for (Workflow<?> w : workflows) {
            Workflow<?> previous = byKey.put(key(w.name(), w.version()), w);
            if (previous != null) {
                throw new IllegalArgumentException(
                        "workflow '" + w.name() + "' version " + w.version() + " is registered twice");
            }
        }
        this.runnable = workflows.stream().map(w -> new WorkflowVersion(w.name(), w.version()))
                .collect(Collectors.toUnmodifiableSet());
    }

    /** The registered workflow versions: what this runtime claims and advertises. */
    public Set<WorkflowVersion> runnable() {
        return runnable;
    }

    private static String key(String name, int version) {
        return name + '#' + version;
    }

    /** The workflow, or null. */
    public Workflow<?> find(String name, int version) {
        return byKey.get(key(name, version));
    }

    /** All registered workflows. */
    public List<Workflow<?>> all() {
        return List.copyOf(byKey.values());
    }
}
