package dev.sas.reliability;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A TCP proxy on the loopback in front of the database, one per worker node, that the harness can
 * cut to make a network partition between that node and the database: {@link Cut#BOTH} (nothing
 * passes), {@link Cut#TO_DB} (the node's requests stop; what the database sent still arrives),
 * {@link Cut#FROM_DB} (the database still receives and commits the node's statements, but their
 * answers are held: a claim or a completion that committed while its node thinks it failed).
 *
 * <p>A cut holds bytes rather than dropping them, as a partition does to TCP segments that are
 * retransmitted: when it heals, what was held flows on (a connection the other side closed
 * meanwhile is then closed here too). Plain sockets and two threads per connection: a few dozen
 * connections per run. Thread-safe.
 */
final class DbProxy implements AutoCloseable {
    /** Which direction a partition cuts. */
    enum Cut {
        /** Nothing passes. */
        BOTH,
        /** From the node to the database: requests are held. */
        TO_DB,
        /** From the database to the node: answers are held. */
        FROM_DB;

        static Cut parse(String v) {
            return switch (v.trim().toLowerCase(java.util.Locale.ROOT)) {
                case "both" -> BOTH;
                case "to-db" -> TO_DB;
                case "from-db" -> FROM_DB;
                default -> throw new IllegalArgumentException("a partition cuts both, to-db or from-db, not " + v);
            };
        }

        String label() {
            return name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
        }
    }

    private static final Pattern HOST_PORT = Pattern.compile("^(jdbc:[a-z]+://)([^/:?,]+)(?::(\\d+))?([/?].*)$");

    private final ServerSocket server;
    private final String host;
    private final int port;
    private final Object lock = new Object();
    private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
    private final AtomicLong connections = new AtomicLong();
    private volatile boolean toDbCut;
    private volatile boolean fromDbCut;
    private volatile boolean closed;

    /** Listens on an ephemeral loopback port and forwards to {@code host:port}. */
    DbProxy(String host, int port, String name) throws IOException {
        this.host = host;
        this.port = port;
        this.server = new ServerSocket();
        server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        Thread t = new Thread(this::accept, "db-proxy-" + name);
        t.setDaemon(true);
        t.start();
    }

    /** A proxy in front of the single host of {@code jdbcUrl}. */
    static DbProxy of(String jdbcUrl, String name) throws IOException {
        Matcher m = HOST_PORT.matcher(jdbcUrl);
        if (!m.matches()) {
            throw new IllegalArgumentException("a partition proxy needs a single-host JDBC URL, not " + jdbcUrl);
        }
        int defaultPort = jdbcUrl.startsWith("jdbc:postgresql:") ? 5432 : 3306;
        return new DbProxy(m.group(2), m.group(3) == null ? defaultPort : Integer.parseInt(m.group(3)), name);
    }

    /** {@code jdbcUrl} with its host and port replaced by this proxy's. */
    String rewrite(String jdbcUrl) {
        Matcher m = HOST_PORT.matcher(jdbcUrl);
        if (!m.matches()) {
            throw new IllegalArgumentException("a partition proxy needs a single-host JDBC URL, not " + jdbcUrl);
        }
        return m.group(1) + "127.0.0.1:" + server.getLocalPort() + m.group(4);
    }

    int localPort() {
        return server.getLocalPort();
    }

    /** Connections accepted so far. */
    long connections() {
        return connections.get();
    }

    /** Starts a partition in direction {@code cut}. */
    void cut(Cut cut) {
        synchronized (lock) {
            toDbCut = cut != Cut.FROM_DB;
            fromDbCut = cut != Cut.TO_DB;
        }
    }

    /** Ends the partition: held bytes flow on. */
    void heal() {
        synchronized (lock) {
            toDbCut = false;
            fromDbCut = false;
            lock.notifyAll();
        }
    }

    private void accept() {
        while (!closed) {
            try {
                Socket node = server.accept();
                connections.incrementAndGet();
                Socket db = new Socket();
                try {
                    db.connect(new InetSocketAddress(host, port), 5_000);
                } catch (IOException e) {
                    node.close();
                    continue;
                }
                node.setTcpNoDelay(true);
                db.setTcpNoDelay(true);
                sockets.addAll(List.of(node, db));
                pump(node, db, true);
                pump(db, node, false);
            } catch (IOException e) {
                if (!closed) {
                    System.err.println("db proxy: accept failed: " + e);
                }
            }
        }
    }

    private void pump(Socket from, Socket to, boolean toDb) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[16 * 1024];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                while (true) {
                    awaitOpen(toDb);
                    int n = in.read(buf);
                    if (n < 0) {
                        break;
                    }
                    // what was read just before the cut is held too
                    awaitOpen(toDb);
                    out.write(buf, 0, n);
                    out.flush();
                }
            } catch (IOException | InterruptedException e) {
                // the other side closed, or the proxy did
            } finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        }, "db-proxy-pump");
        t.setDaemon(true);
        t.start();
    }

    private void awaitOpen(boolean toDb) throws InterruptedException {
        synchronized (lock) {
            while (!closed && (toDb ? toDbCut : fromDbCut)) {
                lock.wait();
            }
        }
    }

    private void closeQuietly(Socket s) {
        sockets.remove(s);
        try {
            s.close();
        } catch (IOException e) {
            // already closed
        }
    }

    @Override
    public void close() {
        closed = true;
        heal();
        try {
            server.close();
        } catch (IOException e) {
            // already closed
        }
        for (Socket s : sockets) {
            closeQuietly(s);
        }
    }
}
