package dev.sas.cli;

import dev.sas.core.AgentStatus;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** {@code sas agents}: the shared flow-control state of every agent endpoint. */
@Command(name = "agents", mixinStandardHelpOptions = true,
        description = {"Show every agent endpoint called through a limit or a circuit breaker: breaker state,"
                + " calls in flight across the cluster, failures in the breaker's window."})
final class AgentsCommand implements Callable<Integer> {

    @Mixin
    StoreOptions store;

    @Spec
    CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        try (StoreOptions.Session s = store.open()) {
            List<AgentStatus> agents = s.client().operations().agents();
            if (store.json) {
                List<Object> docs = new ArrayList<>();
                for (AgentStatus a : agents) {
                    Map<String, Object> m = new LinkedHashMap<>();
                    m.put("agent", a.agent());
                    m.put("endpoint", a.endpoint());
                    m.put("breaker", a.breaker().name());
                    m.put("breakerSince", Output.iso(a.breakerSince()));
                    m.put("openUntil", Output.iso(a.openUntil()));
                    m.put("callsInFlight", a.callsInFlight());
                    m.put("probesInFlight", a.probesInFlight());
                    m.put("callsInWindow", a.callsInWindow());
                    m.put("failuresInWindow", a.failuresInWindow());
                    m.put("consecutiveFailures", a.consecutiveFailures());
                    m.put("lastFailure", a.lastFailure());
                    m.put("updatedAt", Output.iso(a.updatedAt()));
                    docs.add(m);
                }
                Output.json(out, docs);
                return 0;
            }
            List<List<String>> rows = new ArrayList<>();
            for (AgentStatus a : agents) {
                rows.add(List.of(a.agent(), a.endpoint(), a.breaker().name() + (a.openUntil() == null ? ""
                        : " until " + Output.time(a.openUntil())), Integer.toString(a.callsInFlight()),
                        a.failuresInWindow() + "/" + a.callsInWindow(), Integer.toString(a.consecutiveFailures()),
                        Output.cut(a.lastFailure(), 50)));
            }
            Output.table(out, List.of("AGENT", "ENDPOINT", "BREAKER", "IN FLIGHT", "FAILED/CALLS", "IN A ROW",
                    "LAST FAILURE"), rows);
            out.println(agents.size() + " endpoint" + (agents.size() == 1 ? "" : "s")
                    + (agents.isEmpty() ? " (none called through a limit or breaker yet)" : ""));
            return 0;
        }
    }
}
