package dev.sas.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.sas.core.SasClient;
import dev.sas.core.SasRuntime;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Agent flow control across separate JVMs on PostgreSQL: worker processes ({@link FlowWorker}) call
 * a fake HTTP service in this JVM, which counts the calls it has in flight and records each call:
 * its payload and when the runtime made it, in database time. Small by default (150 calls per
 * agent); the environment variable {@code SAS_TEST_FLOW_BIG_RUN=true} runs the 20 s at 50
 * calls per second (1,000 calls).
 *
 * <p>Nothing here depends on how fast the machine is: a call made twice is allowed only where SAS
 * started a second attempt (a step that missed its deadline on a starved machine is retried, as
 * it should be), rates are measured on the database's clock the limiter uses, not on when a
 * starved service thread got to a request, and what a held permit keeps out is checked against
 * the permit's own expiry in the store.
 */
class MultiJvmFlowTest {

    private static final boolean BIG = "true".equals(System.getenv("SAS_TEST_FLOW_BIG_RUN"));

    /** One call as the service saw it: its payload, and when the runtime made it (database time). */
    record Arrival(String payload, Instant started) {
    }

    /** One service behind one agent: counts its calls in flight and records each call. */
    static final class Counter {
        final AtomicInteger inFlight = new AtomicInteger();
        final AtomicInteger maxInFlight = new AtomicInteger();
        final ConcurrentLinkedQueue<Arrival> arrivals = new ConcurrentLinkedQueue<>();
        final List<HttpExchange> held = new CopyOnWriteArrayList<>();
        volatile boolean hold;

        /** The calls' start times, sorted. */
        List<Instant> starts() {
            return arrivals.stream().map(Arrival::started).sorted().toList();
        }

        /** How many calls carried {@code payload}. */
        long callsWith(String payload) {
            return arrivals.stream().filter(a -> a.payload().equals(payload)).count();
        }

        /** The most calls started within any window of {@code window}. */
        long mostWithin(Duration window) {
            List<Instant> t = starts();
            long most = 0;
            int j = 0;
            for (int i = 0; i < t.size(); i++) {
                while (!t.get(i).isBefore(t.get(j).plus(window))) {
                    j++;
                }
                most = Math.max(most, i - j + 1);
            }
            return most;
        }
    }

    /** The remote services, one per agent: each answers after 20 ms (or holds calls open). */
    static final class HttpService implements AutoCloseable {
        final HttpServer server;
        final ExecutorService handlers = Executors.newFixedThreadPool(16);
        final ScheduledExecutorService later = Executors.newSingleThreadScheduledExecutor();
        final java.util.Map<String, Counter> counters = new java.util.HashMap<>();

        HttpService() throws IOException {
            server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
            for (String name : List.of(FlowWorker.CAPACITY, FlowWorker.RATE, FlowWorker.KILL)) {
                Counter c = new Counter();
                counters.put(name, c);
                server.createContext("/" + name, ex -> handle(c, ex));
            }
            server.setExecutor(handlers);
            server.start();
        }

        Counter counter(String name) {
            return counters.get(name);
        }

        URI uri() {
            return URI.create("http://127.0.0.1:" + server.getAddress().getPort() + "/");
        }

        private void handle(Counter c, HttpExchange ex) throws IOException {
            String payload = new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
            c.arrivals.add(new Arrival(payload, Instant.parse(ex.getRequestHeaders().getFirst(
                    FlowWorker.STARTED_HEADER))));
            c.maxInFlight.accumulateAndGet(c.inFlight.incrementAndGet(), Math::max);
            if (c.hold) {
                c.held.add(ex);
                return;
            }
            later.schedule(() -> respond(c, ex), 20, TimeUnit.MILLISECONDS);
        }

        private void respond(Counter c, HttpExchange ex) {
            c.inFlight.decrementAndGet(); // done before the answer reaches the caller
            try (ex) {
                byte[] ok = "ok".getBytes(StandardCharsets.UTF_8);
                ex.sendResponseHeaders(200, ok.length);
                try (OutputStream out = ex.getResponseBody()) {
                    out.write(ok);
                }
            } catch (IOException callerGone) {
                // the caller died or gave up
            }
        }

        @Override
        public void close() {
            server.stop(0);
            handlers.shutdownNow();
            later.shutdownNow();
        }
    }

    private final List<Process> workers = new ArrayList<>();
    private final List<AutoCloseable> closing = new ArrayList<>();
    private String url;
    private String prefix;

    @AfterEach
    void tearDown() throws Exception {
        for (Process p : workers) {
            try {
                p.getOutputStream().close();
            } catch (IOException alreadyDead) {
                // killed by the test
            }
        }
        for (Process p : workers) {
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
            }
        }
        for (int i = closing.size() - 1; i >= 0; i--) {
            closing.get(i).close();
        }
        if (url != null) {
            TestDb.POSTGRES.drop(url, prefix);
        }
    }

    private Process worker(String instance, URI service) throws Exception {
        Path log = Path.of("target", "flow-worker-" + prefix + instance + ".log");
        Files.createDirectories(log.getParent());
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-cp",
                System.getProperty("java.class.path"), FlowWorker.class.getName(), url, prefix, instance,
                service.toString())
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        workers.add(p);
        await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(200)).until(() -> !p.isAlive()
                || Files.readString(log).contains("flow worker started"));
        assertThat(p.isAlive()).as("worker %s started (log %s)", instance, log).isTrue();
        return p;
    }

    /** Tasks not in a final state. */
    private static long unfinished(SasClient client) {
        return client.countByStatus().entrySet().stream().filter(e -> !e.getKey().isTerminal())
                .mapToLong(java.util.Map.Entry::getValue).sum();
    }

    private long count(SasClient client, TaskStatus status) {
        return client.countByStatus().get(status);
    }

    @Test
    void three_jvms_keep_the_concurrency_limit_and_the_rate_limit_counted_by_the_services() throws Exception {
        url = TestDb.POSTGRES.url();
        prefix = TestDb.randomPrefix();
        HttpService service = new HttpService();
        closing.add(service);
        JdbcStateStore store = TestDb.builder(url, prefix).build();
        closing.add(store);
        for (int n = 0; n < 3; n++) {
            worker("jvm-" + n, service.uri());
        }
        java.util.Map<String, Workflow<String>> workflows = FlowWorker.workflows(service.uri());
        SasClient client = SasClient.builder().stateStore(store).build();
        int capacityTasks = 150;
        int rateTasks = BIG ? 1_000 : 150;

        client.submitAll(workflows.get(FlowWorker.CAPACITY), inputs("c-", capacityTasks));
        client.submitAll(workflows.get(FlowWorker.RATE), inputs("r-", rateTasks));

        // generous: on a machine at load 30 the three workers drain 300 tasks in minutes, not seconds
        await().atMost(Duration.ofMinutes(BIG ? 20 : 10)).pollInterval(Duration.ofMillis(500))
                .until(() -> unfinished(client) == 0);
        assertThat(client.countByStatus()).as("every task processed").containsEntry(TaskStatus.PROCESSED,
                (long) capacityTasks + rateTasks);
        Counter capacity = service.counter(FlowWorker.CAPACITY);
        Counter rate = service.counter(FlowWorker.RATE);
        List<Instant> starts = rate.starts();
        double seconds = Duration.between(starts.get(0), starts.get(starts.size() - 1)).toNanos() / 1e9;
        double observedRate = (starts.size() - 1) / seconds;
        long busiestSecond = rate.mostWithin(Duration.ofSeconds(1));
        System.out.printf(Locale.ROOT, "MultiJvmFlowTest: capacity agent: %d calls, most in flight %d (limit 5);"
                + " rate agent: %d calls in %.1f s = %.1f/s (limit 50/s, burst 5), busiest second %d calls%n",
                capacity.arrivals.size(), capacity.maxInFlight.get(), starts.size(), seconds, observedRate,
                busiestSecond);

        assertThat(capacity.maxInFlight).as("never more than 5 in flight, counted by the service")
                .hasValueLessThanOrEqualTo(5);
        assertEveryCallIsAnAttempt(client, workflows.get(FlowWorker.CAPACITY), capacity, "c-", capacityTasks);
        assertEveryCallIsAnAttempt(client, workflows.get(FlowWorker.RATE), rate, "r-", rateTasks);
        assertThat(observedRate).as("the rate over the run (database time), within 10 %").isLessThanOrEqualTo(50 * 1.1);
        assertThat(busiestSecond).as("any second (database time): the rate and the burst, within 10 %")
                .isLessThanOrEqualTo(60);
    }

    /**
     * Every task's call reached the service, and a task's call came more than once only if SAS
     * started as many attempts (a retry after a missed deadline or a failure): no call is lost and
     * none is made without an attempt.
     */
    private static void assertEveryCallIsAnAttempt(SasClient client, Workflow<String> wf, Counter counter,
            String prefix, int tasks) {
        int retried = 0;
        for (int i = 0; i < tasks; i++) {
            String key = prefix + i;
            long calls = counter.callsWith(key);
            // a task held back (WAITING) spends no attempt: only real attempts may call again
            long attempts = client.find(wf.name(), key).orElseThrow().step("charge").attempts();
            assertThat(calls).as("calls of task %s (%d attempts started)", key, attempts).isBetween(1L, attempts);
            retried += attempts > 1 ? 1 : 0;
        }
        assertThat(counter.arrivals).as("no call for another task").allMatch(a -> a.payload().startsWith(prefix));
        System.out.printf(Locale.ROOT, "MultiJvmFlowTest: %s: %d calls for %d tasks, %d task(s) retried%n", prefix,
                counter.arrivals.size(), tasks, retried);
    }

    private static java.util.Map<String, String> inputs(String prefix, int n) {
        java.util.Map<String, String> inputs = new java.util.LinkedHashMap<>();
        for (int i = 0; i < n; i++) {
            inputs.put(prefix + i, prefix + i);
        }
        return inputs;
    }

    @Test
    void a_jvm_killed_while_holding_permits_keeps_them_out_until_a_lease_past_its_calls_deadline() throws Exception {
        url = TestDb.POSTGRES.url();
        prefix = TestDb.randomPrefix();
        Duration lease = FlowWorker.flow(FlowWorker.KILL).permitLease();
        HttpService service = new HttpService();
        closing.add(service);
        JdbcStateStore store = TestDb.builder(url, prefix).build();
        closing.add(store);
        Counter kill = service.counter(FlowWorker.KILL);
        kill.hold = true;
        Process doomed = worker("doomed", service.uri());
        Workflow<String> wf = FlowWorker.workflows(service.uri()).get(FlowWorker.KILL);
        SasClient client = SasClient.builder().stateStore(store).build();
        TaskId held1 = client.submit(wf, "held-1", "held-1").id();
        TaskId held2 = client.submit(wf, "held-2", "held-2").id();
        await().atMost(Duration.ofSeconds(60)).until(() -> kill.held.size() == 2);
        Instant deadline = later(client.find(held1).orElseThrow().completeBy(),
                client.find(held2).orElseThrow().completeBy());
        SasRuntime survivor = SasRuntime.builder().stateStore(store).workflow(wf).instanceId("survivor")
                .pollInterval(Duration.ofMillis(50)).supervisorInterval(Duration.ofMillis(500)).build().start();
        closing.add(survivor);
        TaskId next = client.submit(wf, "next", "next").id();
        // the survivor asked for a permit and was held back: the doomed node's two calls hold both
        await().atMost(Duration.ofSeconds(60)).until(() -> client.events(next).stream()
                .anyMatch(e -> e.type() == TaskEvent.Type.WAITING));
        assertThat(store.currentTime().orElseThrow()).as("precondition: the held calls are within their deadline")
                .isBefore(deadline);
        assertThat(kill.arrivals).extracting(Arrival::payload).containsExactlyInAnyOrder("held-1", "held-2");
        assertThat(store.flowControl().orElseThrow().gates(store.currentTime().orElseThrow()).get(0).permitsInUse()).isEqualTo(2);

        List<Arrival> beforeKill = List.copyOf(kill.arrivals);
        doomed.destroyForcibly().waitFor(30, TimeUnit.SECONDS); // SIGKILL: nothing is given back
        long lastExpiry = maxPermitExpiry("doomed");
        long firstExpiry = minPermitExpiry("doomed");
        assertThat(Instant.ofEpochMilli(lastExpiry)).as("its permits lapse a lease past its calls' deadline, not later")
                .isBeforeOrEqualTo(deadline.plus(lease));
        kill.hold = false;

        await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(100))
                .until(() -> count(client, TaskStatus.PROCESSED) == 3);
        assertThat(client.events(next)).extracting(TaskEvent::type).contains(TaskEvent.Type.WAITING);
        List<Arrival> afterKill = new ArrayList<>(kill.arrivals);
        afterKill.removeAll(beforeKill);
        assertThat(afterKill)
                .as("every call after the kill started once a dead node's permit had lapsed (database time)")
                .isNotEmpty()
                .allSatisfy(a -> assertThat(a.started().toEpochMilli()).isGreaterThanOrEqualTo(firstExpiry));
        assertThat(store.flowControl().orElseThrow().gates(store.currentTime().orElseThrow()).get(0).permitsInUse()).isZero();
    }

    private static Instant later(Instant a, Instant b) {
        return a.isAfter(b) ? a : b;
    }

    private long minPermitExpiry(String holder) throws Exception {
        try (Connection c = DriverManager.getConnection(url);
                PreparedStatement ps = c.prepareStatement("SELECT MIN(expires_at) FROM " + prefix
                        + "agent_permit WHERE holder = ?")) {
            ps.setString(1, holder);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }

    private long maxPermitExpiry(String holder) throws Exception {
        try (Connection c = DriverManager.getConnection(url);
                PreparedStatement ps = c.prepareStatement("SELECT MAX(expires_at) FROM " + prefix
                        + "agent_permit WHERE holder = ?")) {
            ps.setString(1, holder);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }
}
