package dev.sas.examples.orders.services;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A small HTTP service on {@code 127.0.0.1} (a free port) standing in for a remote system of the
 * web shop: it keeps its own ledger and honours an {@code Idempotency-Key} header, so a retried
 * call is applied once and answered with the first answer. Faults come from its {@link Faults}.
 *
 * <p>Every request is a {@code POST} with a form body. Answers: {@code 2xx} with a form body,
 * {@code 503} (transient, nothing done), {@code 4xx} (rejected for good, nothing done, not
 * remembered under the key, so the call can succeed once the cause is lifted).
 *
 * <p>Thread-safe. {@link #close()} stops the server.
 */
public abstract class RemoteService implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(RemoteService.class);

    /** The header carrying the idempotency key. */
    public static final String IDEMPOTENCY_KEY = "Idempotency-Key";

    private final String name;
    private final Faults faults;
    private final Map<String, Reply> replies = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
    private final Map<String, Object> keyLocks = new ConcurrentHashMap<>();
    private final AtomicLong requests = new AtomicLong();
    private final AtomicLong unavailable = new AtomicLong();
    private final AtomicLong outage = new AtomicLong();
    private final AtomicLong hung = new AtomicLong();
    private final AtomicLong replayed = new AtomicLong();
    private final AtomicLong rejected = new AtomicLong();
    private HttpServer server;
    private ExecutorService executor;

    /**
     * @param name the service name, used in thread names and messages
     * @param faults its fault knobs
     */
    protected RemoteService(String name, Faults faults) {
        this.name = Objects.requireNonNull(name, "name must not be null");
        this.faults = Objects.requireNonNull(faults, "faults must not be null");
    }

    /** An answer of the service. */
    protected record Reply(int status, String body) {
        /** A {@code 200} with these form fields. */
        public static Reply ok(String... namesAndValues) {
            return new Reply(200, Form.encode(Form.of(namesAndValues)));
        }

        /** A rejection that no retry can fix. */
        public static Reply rejected(int status, String reason) {
            return new Reply(status, Form.encode(Form.of("error", reason)));
        }
    }

    /**
     * Does the work of one request, the first time its key is seen (or again after a rejection).
     * Called with the key's lock held.
     *
     * @param path the request path, e.g. {@code /charge}
     * @param fields the form fields
     * @return the answer; 2xx answers are remembered under the key
     */
    protected abstract Reply apply(String path, Map<String, String> fields);

    /** The service's name. */
    public String name() {
        return name;
    }

    /** Its fault knobs. */
    public Faults faults() {
        return faults;
    }

    /**
     * Starts listening on a free port of {@code 127.0.0.1}.
     *
     * @throws IOException if the port cannot be opened
     */
    public synchronized RemoteService start() throws IOException {
        if (server != null) {
            return this;
        }
        AtomicInteger n = new AtomicInteger();
        executor = Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, name + "-http-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 200);
        server.createContext("/", this::handle);
        server.setExecutor(executor);
        server.start();
        log.info("{} service listening on {}", name, uri());
        return this;
    }

    /** Where it listens, e.g. {@code http://127.0.0.1:41234}. */
    public URI uri() {
        InetSocketAddress a = server.getAddress();
        return URI.create("http://" + a.getAddress().getHostAddress() + ":" + a.getPort());
    }

    /** Requests received. */
    public long requests() {
        return requests.get();
    }

    /** Requests answered 503 by fault injection. */
    public long unavailable() {
        return unavailable.get();
    }

    /** Requests that hung past the caller's deadline by fault injection. */
    public long hung() {
        return hung.get();
    }

    /** Requests answered 503 because the service was down ({@link Faults#down(boolean)}). */
    public long outage() {
        return outage.get();
    }

    /** Requests answered from the idempotency cache: retries that were not applied twice. */
    public long replayed() {
        return replayed.get();
    }

    /** Requests rejected for good (4xx). */
    public long rejected() {
        return rejected.get();
    }

    private void handle(HttpExchange ex) throws IOException {
        try (ex) {
            requests.incrementAndGet();
            if (!"POST".equals(ex.getRequestMethod())) {
                send(ex, Reply.rejected(405, "use POST"));
                return;
            }
            String key = ex.getRequestHeaders().getFirst(IDEMPOTENCY_KEY);
            if (key == null || key.isBlank()) {
                send(ex, Reply.rejected(400, "missing " + IDEMPOTENCY_KEY + " header"));
                return;
            }
            Map<String, String> fields;
            try (InputStream in = ex.getRequestBody()) {
                fields = Form.decode(new String(in.readAllBytes(), StandardCharsets.UTF_8));
            }
            if (faults.isDown()) {
                outage.incrementAndGet();
                send(ex, new Reply(503, Form.encode(Form.of("error", name + " is down"))));
                return;
            }
            int call = calls.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
            if (faults.unavailable(key, call)) {
                unavailable.incrementAndGet();
                send(ex, new Reply(503, Form.encode(Form.of("error", name + " is unavailable, try again"))));
                return;
            }
            Reply reply;
            synchronized (keyLocks.computeIfAbsent(key, k -> new Object())) {
                reply = replies.get(key);
                if (reply != null) {
                    replayed.incrementAndGet();
                } else {
                    try {
                        reply = apply(ex.getRequestURI().getPath(), fields);
                    } catch (IllegalArgumentException bad) {
                        reply = Reply.rejected(400, bad.getMessage());
                    }
                    if (reply.status() / 100 == 2) {
                        replies.put(key, reply);
                    } else {
                        rejected.incrementAndGet();
                    }
                }
            }
            Duration pause = faults.latency(key, call);
            if (faults.hangs(key, call)) {
                hung.incrementAndGet();
                pause = pause.plus(faults.hangFor());
            }
            if (!pause.isZero()) {
                TimeUnit.NANOSECONDS.sleep(pause.toNanos());
            }
            send(ex, reply);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException e) {
            // the caller gave up (its deadline passed) and closed the connection
            log.debug("{}: could not answer a request: {}", name, e.toString());
        }
    }

    private static void send(HttpExchange ex, Reply reply) throws IOException {
        byte[] body = reply.body().getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", "application/x-www-form-urlencoded");
        ex.sendResponseHeaders(reply.status(), body.length == 0 ? -1 : body.length);
        try (OutputStream out = ex.getResponseBody()) {
            out.write(body);
        }
    }

    /** Stops the server at once; hung requests are dropped. Idempotent. */
    @Override
    public synchronized void close() {
        if (server != null) {
            server.stop(0);
            executor.shutdownNow();
            server = null;
        }
    }

    @Override
    public String toString() {
        return name + "@" + (server == null ? "stopped" : uri()) + " " + faults;
    }
}
