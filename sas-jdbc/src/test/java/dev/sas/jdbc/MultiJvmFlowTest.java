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
 * a fake HTTP service in this JVM, which counts the calls it has in flight and when each arrived.
 * Small by default (150 calls per agent); the environment variable {@code SAS_TEST_FLOW_BIG_RUN=true}
 * runs the 20 s at 50 calls per second (1,000 calls).
 */
class MultiJvmFlowTest {

    private static final boolean BIG = "true".equals(System.getenv("SAS_TEST_FLOW_BIG_RUN"));

    /** One service behind one agent: counts its calls in flight and when each arrived. */
    static final class Counter {
        final AtomicInteger inFlight = new AtomicInteger();
        final AtomicInteger maxInFlight = new AtomicInteger();
        final ConcurrentLinkedQueue<Long> arrivals = new ConcurrentLinkedQueue<>();
        final List<HttpExchange> held = new CopyOnWriteArrayList<>();
        volatile boolean hold;

        /** The most calls that arrived within any window of {@code window}. */
        long mostWithin(Duration window) {
            List<Long> t = new ArrayList<>(arrivals);
            t.sort(Long::compare);
            long most = 0;
            int j = 0;
            for (int i = 0; i < t.size(); i++) {
                while (t.get(i) - t.get(j) >= window.toNanos()) {
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
            ex.getRequestBody().readAllBytes();
            c.arrivals.add(System.nanoTime());
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

        await().atMost(Duration.ofSeconds(BIG ? 300 : 120)).pollInterval(Duration.ofMillis(200))
                .until(() -> count(client, TaskStatus.PROCESSED) == capacityTasks + rateTasks);
        Counter capacity = service.counter(FlowWorker.CAPACITY);
        Counter rate = service.counter(FlowWorker.RATE);
        List<Long> arrivals = new ArrayList<>(rate.arrivals);
        arrivals.sort(Long::compare);
        double seconds = (arrivals.get(arrivals.size() - 1) - arrivals.get(0)) / 1e9;
        double observedRate = (arrivals.size() - 1) / seconds;
        long busiestSecond = rate.mostWithin(Duration.ofSeconds(1));
        System.out.printf(Locale.ROOT, "MultiJvmFlowTest: capacity agent: %d calls, most in flight %d (limit 5);"
                + " rate agent: %d calls in %.1f s = %.1f/s (limit 50/s, burst 5), busiest second %d calls%n",
                capacity.arrivals.size(), capacity.maxInFlight.get(), arrivals.size(), seconds, observedRate,
                busiestSecond);

        assertThat(capacity.maxInFlight).as("never more than 5 in flight, counted by the service")
                .hasValueLessThanOrEqualTo(5);
        assertThat(capacity.arrivals).hasSize(capacityTasks);
        assertThat(arrivals).hasSize(rateTasks);
        assertThat(observedRate).as("the rate over the run, within 10 %").isLessThanOrEqualTo(50 * 1.1);
        assertThat(busiestSecond).as("any second: the rate and the burst, within 10 %").isLessThanOrEqualTo(60);
    }

    private static java.util.Map<String, String> inputs(String prefix, int n) {
        java.util.Map<String, String> inputs = new java.util.LinkedHashMap<>();
        for (int i = 0; i < n; i++) {
            inputs.put(prefix + i, prefix + i);
        }
        return inputs;
    }

    @Test
    void a_jvm_killed_while_holding_permits_gives_them_back_within_their_lease() throws Exception {
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
        client.submit(wf, "held-1", "held-1");
        client.submit(wf, "held-2", "held-2");
        await().atMost(Duration.ofSeconds(60)).until(() -> kill.held.size() == 2);
        SasRuntime survivor = SasRuntime.builder().stateStore(store).workflow(wf).instanceId("survivor")
                .pollInterval(Duration.ofMillis(50)).supervisorInterval(Duration.ofMillis(500)).build().start();
        closing.add(survivor);
        TaskId next = client.submit(wf, "next", "next").id();
        await().atMost(Duration.ofSeconds(60)).until(() -> client.find(next).orElseThrow().status()
                == TaskStatus.WAITING);
        // a renewal or two happen while the calls hang: the permits outlive their first lease
        Instant heldSince = store.currentTime().orElseThrow();
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100))
                .until(() -> store.currentTime().orElseThrow().isAfter(heldSince.plus(lease).plusMillis(500)));
        assertThat(store.gates(store.currentTime().orElseThrow()).get(0).permitsInUse())
                .as("renewed while the calls run").isEqualTo(2);
        assertThat(client.find(next).orElseThrow().status()).isEqualTo(TaskStatus.WAITING);

        doomed.destroyForcibly().waitFor(30, TimeUnit.SECONDS); // SIGKILL
        Instant killedAt = store.currentTime().orElseThrow();
        long lastExpiry = maxPermitExpiry("doomed");
        assertThat(Instant.ofEpochMilli(lastExpiry)).as("its permits lapse within one lease of its death")
                .isBeforeOrEqualTo(killedAt.plus(lease));
        kill.hold = false;

        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100))
                .until(() -> count(client, TaskStatus.PROCESSED) == 3);
        assertThat(client.events(next)).extracting(TaskEvent::type).contains(TaskEvent.Type.WAITING);
        assertThat(store.gates(store.currentTime().orElseThrow()).get(0).permitsInUse()).isZero();
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
