package dev.sas.console;

import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running console on the JDK's HTTP server, from {@link SasConsole#serve(int)}. Its requests run
 * on a small pool of daemon threads named {@code sas-console-N}. Thread-safe; {@link #close()} is
 * idempotent.
 */
public final class ConsoleServer implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ConsoleServer.class);
    /** Threads answering requests. */
    static final int THREADS = 4;

    private final HttpServer server;
    private final ExecutorService executor;
    private final URI url;
    private final AtomicBoolean closed = new AtomicBoolean();

    private ConsoleServer(HttpServer server, ExecutorService executor) {
        this.server = server;
        this.executor = executor;
        InetSocketAddress bound = server.getAddress();
        String host = bound.getAddress().isAnyLocalAddress() ? "127.0.0.1" : bound.getAddress().getHostAddress();
        if (host.contains(":")) {
            host = "[" + host + "]";
        }
        this.url = URI.create("http://" + host + ":" + bound.getPort() + "/");
    }

    static ConsoleServer start(InetSocketAddress address, HttpHandler handler) throws IOException {
        HttpServer server = HttpServer.create(address, 0);
        AtomicInteger n = new AtomicInteger();
        ExecutorService executor = Executors.newFixedThreadPool(THREADS, r -> {
            Thread t = new Thread(r, "sas-console-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        server.setExecutor(executor);
        server.createContext("/", handler);
        server.start();
        ConsoleServer running = new ConsoleServer(server, executor);
        log.info("SAS console listening at {}", running.url);
        return running;
    }

    /** Where the console is, e.g. {@code http://127.0.0.1:8089/}. */
    public URI url() {
        return url;
    }

    /** The port it listens on. */
    public int port() {
        return server.getAddress().getPort();
    }

    /** Stops listening at once and ends its threads. Idempotent. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            server.stop(0);
            executor.shutdownNow();
            log.info("SAS console at {} closed", url);
        }
    }
}
