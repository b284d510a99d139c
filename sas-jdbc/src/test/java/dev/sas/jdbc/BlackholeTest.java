package dev.sas.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sas.core.Codec;
import dev.sas.core.SasRuntime;
import dev.sas.core.StateStoreException;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The network between a running runtime and its database turns into a black hole: every open
 * connection stays open but no byte gets through either way (a half-open connection, as after a
 * firewall or NAT drops its state), and new connections hang too. Then new connections work again
 * while the old ones stay dead. The socket and statement time-outs free every thread: every task
 * ends PROCESSED, no step is recorded twice, and the runtime closes.
 */
class BlackholeTest {

    @ParameterizedTest
    @EnumSource(value = TestDb.class, names = {"POSTGRES", "MARIADB"})
    void every_thread_recovers_from_half_open_connections(TestDb db) throws Exception {
        String url = db.url();
        String prefix = TestDb.randomPrefix();
        Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
        Workflow<String> wf = Workflow.builder("blackhole", Codec.string())
                .step("one", s -> s.execute(ctx -> count(runs, ctx.taskId() + "/one")).completeWithin(Duration.ofSeconds(3)))
                .step("two", s -> s.execute(ctx -> count(runs, ctx.taskId() + "/two")).completeWithin(Duration.ofSeconds(3)))
                .build();
        int tasks = 300;
        try (BlackholeProxy proxy = new BlackholeProxy(url)) {
            JdbcStateStore store = JdbcStateStore.builder().url(proxy.url()).tablePrefix(prefix).maxPoolSize(4)
                    .connectTimeout(Duration.ofSeconds(1)).socketTimeout(Duration.ofSeconds(2))
                    .statementTimeout(Duration.ofSeconds(1)).build();
            SasRuntime sas = SasRuntime.builder().stateStore(store).workflow(wf).pollInterval(Duration.ofMillis(50))
                    .supervisorInterval(Duration.ofMillis(200)).shutdownGrace(Duration.ofSeconds(2)).build().start();
            try {
                for (int i = 0; i < tasks; i++) {
                    sas.client().submit(wf, "k" + i, "x");
                }
                await().atMost(Duration.ofSeconds(60)).until(() -> runs.size() >= 20);

                proxy.blackhole();
                // several connections (claim, recorder, supervisor) sent requests into the hole
                await().atMost(Duration.ofSeconds(60)).until(() -> proxy.stalledConnections() >= 2);
                proxy.resumeForNewConnections();

                Map<TaskStatus, Long> counts = await().atMost(Duration.ofSeconds(120))
                        .pollInterval(Duration.ofMillis(200))
                        .ignoreExceptionsInstanceOf(StateStoreException.class)
                        .until(sas.client()::countByStatus, c -> c.getOrDefault(TaskStatus.PROCESSED, 0L) == tasks);
                assertThat(counts.get(TaskStatus.PROCESSED)).isEqualTo(tasks);
            } finally {
                // a thread stuck on a dead socket would keep close() from returning
                CompletableFuture<Void> closed = CompletableFuture.runAsync(() -> {
                    sas.close();
                    store.close();
                });
                await().atMost(Duration.ofSeconds(60)).until(closed::isDone);
                closed.join();
            }
            assertThat(proxy.stalledConnections()).as("connections left half-open").isGreaterThanOrEqualTo(2);
            try (Connection c = DriverManager.getConnection(url);
                    PreparedStatement ps = c.prepareStatement("SELECT COUNT(*) FROM (SELECT task_id, step_index FROM "
                            + prefix + "event WHERE type = 'STEP_COMPLETED' GROUP BY task_id, step_index"
                            + " HAVING COUNT(*) > 1) d");
                    ResultSet rs = ps.executeQuery()) {
                rs.next();
                assertThat(rs.getLong(1)).as("(task, step) pairs recorded as completed twice").isZero();
            }
        } finally {
            db.drop(url, prefix);
        }
        assertThat(runs).hasSize(2 * tasks);
    }

    private static String count(Map<String, AtomicInteger> runs, String key) {
        runs.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
        return "ok";
    }

    /**
     * A TCP proxy on 127.0.0.1 that forwards to the database until {@link #blackhole()}: from then
     * on it keeps every socket open and drops every byte, including on connections accepted later,
     * until {@link #resumeForNewConnections()}; connections accepted after that forward again.
     */
    static final class BlackholeProxy implements AutoCloseable {

        private static final Pattern HOST_PORT = Pattern.compile("//([^/:?]+)(?::(\\d+))?");

        private final String url;
        private final String targetHost;
        private final int targetPort;
        private final ServerSocket server;
        private final List<Link> links = new CopyOnWriteArrayList<>();
        private volatile boolean blackholing;

        BlackholeProxy(String dbUrl) throws IOException {
            Matcher m = HOST_PORT.matcher(dbUrl);
            if (!m.find()) {
                throw new IllegalArgumentException("no host in " + dbUrl);
            }
            targetHost = m.group(1);
            targetPort = m.group(2) != null ? Integer.parseInt(m.group(2))
                    : dbUrl.startsWith("jdbc:postgresql:") ? 5432 : 3306;
            server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
            url = dbUrl.substring(0, m.start()) + "//127.0.0.1:" + server.getLocalPort() + dbUrl.substring(m.end());
            Thread acceptor = new Thread(this::accept, "blackhole-accept");
            acceptor.setDaemon(true);
            acceptor.start();
        }

        String url() {
            return url;
        }

        void blackhole() {
            blackholing = true;
            links.forEach(l -> l.dead = true);
        }

        void resumeForNewConnections() {
            blackholing = false;
        }

        /** Dead connections that a side sent bytes on, which were dropped. */
        long stalledConnections() {
            return links.stream().filter(l -> l.dead && l.dropped.get() > 0).count();
        }

        private void accept() {
            while (!server.isClosed()) {
                try {
                    Socket client = server.accept();
                    Link link = new Link(client, blackholing);
                    links.add(link);
                    if (!link.dead) {
                        // while blackholing, a new connection is accepted but never reaches the server
                        link.server = new Socket(targetHost, targetPort);
                        pump(link, client, true);
                        pump(link, link.server, false);
                    } else {
                        pump(link, client, true);
                    }
                } catch (IOException e) {
                    // closed, or the database refused: the client sees its connection fail
                }
            }
        }

        private void pump(Link link, Socket from, boolean toServer) {
            Thread t = new Thread(() -> {
                byte[] buf = new byte[8192];
                try (InputStream in = from.getInputStream()) {
                    for (int n; (n = in.read(buf)) >= 0; ) {
                        if (link.dead) {
                            link.dropped.addAndGet(n);
                            continue;
                        }
                        OutputStream out = (toServer ? link.server : link.client).getOutputStream();
                        out.write(buf, 0, n);
                        out.flush();
                    }
                } catch (IOException e) {
                    // one side closed
                }
                if (!link.dead) {
                    link.close();
                }
            }, "blackhole-pump");
            t.setDaemon(true);
            t.start();
        }

        @Override
        public void close() throws IOException {
            server.close();
            links.forEach(Link::close);
        }

        private static final class Link {
            final Socket client;
            volatile Socket server;
            volatile boolean dead;
            final java.util.concurrent.atomic.AtomicLong dropped = new java.util.concurrent.atomic.AtomicLong();

            Link(Socket client, boolean dead) {
                this.client = client;
                this.dead = dead;
            }

            void close() {
                try {
                    client.close();
                } catch (IOException ignored) {
                    // closing
                }
                try {
                    if (server != null) {
                        server.close();
                    }
                } catch (IOException ignored) {
                    // closing
                }
            }
        }
    }
}
