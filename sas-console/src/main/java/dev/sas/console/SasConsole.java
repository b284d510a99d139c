package dev.sas.console;

import com.sun.net.httpserver.HttpHandler;
import dev.sas.console.internal.ActionGuard;
import dev.sas.console.internal.Api;
import dev.sas.console.internal.Assets;
import dev.sas.console.internal.ExchangeHandler;
import dev.sas.console.internal.HostGuard;
import dev.sas.console.internal.Json;
import dev.sas.core.SasClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The operator console: a web page and its JSON API over a {@link SasClient}. It shows tasks by
 * state and workflow with their counts, finds them by business key or id, and shows one task's
 * steps, errors and event timeline; searches tasks by state, workflow, creation time and error
 * text; shows every agent endpoint's circuit breaker and calls in flight with the tasks held back
 * for it. With an action token configured an operator can resubmit and cancel tasks, one by one or
 * every task a search matches (after a preview of how many), each action recorded in the task's
 * timeline with who acted ({@link Builder#operator}) and the reason the operator gave. Plain HTML,
 * CSS and JavaScript from this jar: nothing to build, no framework, no external requests.
 *
 * <pre>{@code
 * SasConsole console = SasConsole.builder()
 *         .client(client)
 *         .actionToken(System.getenv("SAS_CONSOLE_TOKEN")) // without one the console is read-only
 *         .build();
 * try (ConsoleServer server = console.serve(8089)) {          // 127.0.0.1:8089
 *     System.out.println("console at " + server.url());
 *     ...
 * }
 * }</pre>
 *
 * <p>Three ways to serve it: {@link #serve(int)} starts the JDK's HTTP server on a port of your
 * choice; {@link #httpHandler()} mounts it under a path of a {@code com.sun.net.httpserver.HttpServer}
 * you run; {@link #handle(ConsoleRequest)} answers one request from any other server (a servlet,
 * a Spring controller), which copies the response back.
 *
 * <p><b>Security.</b> Reading needs nothing: serve the console on a loopback or internal address
 * (the default of {@link #serve(int)} is 127.0.0.1), or mount it behind your own authentication.
 * Every request, reads included, must name in {@code Host} {@code localhost}, an IP address or a
 * host {@linkplain Builder#allowedHost allowed} here, and its {@code Origin}, if any, must be its
 * own or an allowed one: a page of another site that points its own name at the console's address
 * (DNS rebinding) gets 403. A store failure reaches the API client as a short message and an error
 * id; the exception is logged with that id.
 * Actions need the token in the {@code X-SAS-Console-Token} header of a POST, compared in constant
 * time, and are refused when the browser reports another origin; the console sets no cookie, so
 * a page of another site has nothing to forge a request with. Step outputs (payloads) are shown
 * only with {@link Builder#showPayloads(boolean)}. Every response carries a strict
 * Content-Security-Policy and {@code frame-ancestors 'none'}.
 *
 * <p>Immutable and thread-safe; it holds no resources (a {@link ConsoleServer} does).
 */
public final class SasConsole {
    private static final Logger log = LoggerFactory.getLogger(SasConsole.class);

    /** The shortest action token accepted: 16 characters. */
    public static final int MIN_TOKEN_LENGTH = 16;
    /** The default title. */
    public static final String DEFAULT_TITLE = "SAS";
    /** Who an action is recorded as done by when the host names no operator: {@value}. */
    public static final String DEFAULT_OPERATOR = Api.DEFAULT_OPERATOR;
    /** The header that carries the operator's token on an action. */
    public static final String TOKEN_HEADER = ActionGuard.TOKEN_HEADER;

    private static final String CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self';"
            + " connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

    private final Config config;
    private final Api api;
    private final Assets assets;
    private final HostGuard hosts;

    /**
     * The console's settings, as built. The token itself is not kept here.
     *
     * @param client where tasks are read and acted on
     * @param actionsEnabled whether an action token was configured
     * @param showPayloads whether step outputs are shown
     * @param title the page's title
     * @param allowedOrigins origins besides the console's own that may send actions
     * @param allowedHosts host names ({@code name} for any port, or {@code name:port}) the console
     *     answers for besides {@code localhost} and IP addresses
     */
    public record Config(SasClient client, boolean actionsEnabled, boolean showPayloads, String title,
            List<String> allowedOrigins, Set<String> allowedHosts) {
    }

    private SasConsole(Builder b) {
        this.config = new Config(b.client, b.token != null, b.showPayloads, b.title, List.copyOf(b.allowedOrigins),
                Set.copyOf(b.allowedHosts));
        this.hosts = new HostGuard(config.allowedHosts(), config.allowedOrigins());
        ActionGuard guard = new ActionGuard(b.token, config.allowedOrigins());
        this.api = new Api(b.client, guard, b.showPayloads, b.title, b.operator);
        this.assets = new Assets();
    }

    /** A new builder. Not thread-safe. */
    public static Builder builder() {
        return new Builder();
    }

    /** The settings this console was built with. */
    public Config config() {
        return config;
    }

    /**
     * Answers one request: the page ({@code /}), its files, or the API ({@code /api/...}). A request
     * whose {@code Host} or {@code Origin} the console does not answer for gets 403 (see the class
     * comment); pass the request's {@code Host} header through.
     *
     * @throws NullPointerException if {@code request} is null
     */
    public ConsoleResponse handle(ConsoleRequest request) {
        Objects.requireNonNull(request, "request must not be null");
        Map<String, String> headers = new LinkedHashMap<>();
        headers.put("Content-Security-Policy", CSP);
        headers.put("X-Content-Type-Options", "nosniff");
        headers.put("X-Frame-Options", "DENY");
        headers.put("Referrer-Policy", "no-referrer");
        headers.put("Cross-Origin-Opener-Policy", "same-origin");
        headers.put("Cross-Origin-Resource-Policy", "same-origin");
        String path = request.path();
        String refused = hosts.check(request);
        if (refused != null) {
            log.warn("console: request {} {} from {} refused: {}", request.method(), HostGuard.printable(path),
                    request.remoteAddress() == null ? "an unknown address" : request.remoteAddress(), refused);
            headers.put("Cache-Control", "no-store");
            if (path.startsWith("/api/")) {
                headers.put("Content-Type", "application/json; charset=utf-8");
                return new ConsoleResponse(403, headers, Json.write(Api.Answer.error(403, refused).body())
                        .getBytes(StandardCharsets.UTF_8));
            }
            headers.put("Content-Type", "text/plain; charset=utf-8");
            return new ConsoleResponse(403, headers, (refused + "\n").getBytes(StandardCharsets.UTF_8));
        }
        if (path.startsWith("/api/")) {
            Api.Answer answer = api.handle(request);
            headers.put("Content-Type", "application/json; charset=utf-8");
            headers.put("Cache-Control", "no-store");
            if (answer.status() == 405) {
                headers.put("Allow", path.matches("/api/(tasks/[^/]+/[^/]+|workflows/[^/]+/[^/]+|bulk/[^/]+)") ? "POST" : "GET, HEAD");
            }
            return new ConsoleResponse(answer.status(), headers,
                    Json.write(answer.body()).getBytes(StandardCharsets.UTF_8));
        }
        Assets.Asset asset = assets.get(path);
        if (asset == null) {
            headers.put("Content-Type", "text/plain; charset=utf-8");
            return new ConsoleResponse(404, headers, "not found\n".getBytes(StandardCharsets.UTF_8));
        }
        if (!request.method().equals("GET") && !request.method().equals("HEAD")) {
            headers.put("Content-Type", "text/plain; charset=utf-8");
            headers.put("Allow", "GET, HEAD");
            return new ConsoleResponse(405, headers, "only GET here\n".getBytes(StandardCharsets.UTF_8));
        }
        headers.put("Content-Type", asset.contentType());
        headers.put("Cache-Control", "no-cache");
        return new ConsoleResponse(200, headers, asset.bytes());
    }

    /**
     * A handler for a {@code com.sun.net.httpserver.HttpServer} you run: mount it at any path
     * ({@code server.createContext("/sas", console.httpHandler())}); a request for the path without
     * its trailing slash is redirected to it.
     */
    public HttpHandler httpHandler() {
        return new ExchangeHandler(this::handle);
    }

    /**
     * Serves the console on {@code 127.0.0.1:port} with the JDK's HTTP server, on its own threads.
     *
     * @param port the port; 0 picks a free one ({@link ConsoleServer#url()} tells which)
     * @throws IllegalArgumentException if the port is out of range
     * @throws UncheckedIOException if the port cannot be bound
     */
    public ConsoleServer serve(int port) {
        return serve(new InetSocketAddress(InetAddress.getLoopbackAddress(), checkPort(port)));
    }

    /**
     * Serves the console on {@code address} with the JDK's HTTP server, on its own threads. Bind to
     * a non-loopback address only on a network where everyone who reaches it may read tasks.
     *
     * @throws NullPointerException if {@code address} is null
     * @throws UncheckedIOException if the address cannot be bound
     */
    public ConsoleServer serve(InetSocketAddress address) {
        Objects.requireNonNull(address, "address must not be null");
        try {
            return ConsoleServer.start(address, httpHandler());
        } catch (IOException e) {
            throw new UncheckedIOException("the console cannot listen on " + address + ": " + e.getMessage(), e);
        }
    }

    private static int checkPort(int port) {
        if (port < 0 || port > 65_535) {
            throw new IllegalArgumentException("port must be 0 to 65535, was " + port);
        }
        return port;
    }

    @Override
    public String toString() {
        return "SasConsole{actions=" + config.actionsEnabled() + ", payloads=" + config.showPayloads() + '}';
    }

    /**
     * Builds a {@link SasConsole}. Not thread-safe; {@link #build()} copies, so reusing the builder
     * never changes a console already built.
     */
    public static final class Builder {
        private SasClient client;
        private String token;
        private boolean showPayloads;
        private String title = DEFAULT_TITLE;
        private final List<String> allowedOrigins = new ArrayList<>();
        private Function<ConsoleRequest, String> operator;
        private final Set<String> allowedHosts = new LinkedHashSet<>();

        private Builder() {
        }

        /**
         * Who sends a request, as the host knows it: the name recorded with each action in the
         * task's timeline ({@code by alice: <reason>}) and shown on the page. Called on the thread
         * that calls {@link SasConsole#handle}, so a host can read its own request-bound security
         * context, e.g. with Spring Security
         * {@code r -> SecurityContextHolder.getContext().getAuthentication().getName()}, or a header
         * its authenticating proxy sets (never one a client could set itself). A null or blank
         * answer, or no function (the default), records {@value SasConsole#DEFAULT_OPERATOR}; if it
         * throws, the page still loads and actions are refused (never recorded under another name).
         * The token still decides whether the request may act.
         *
         * @param operator names the request's operator (at most 100 characters), or answers null
         * @throws NullPointerException if {@code operator} is null
         */
        public Builder operator(Function<ConsoleRequest, String> operator) {
            this.operator = Objects.requireNonNull(operator, "operator must not be null");
            return this;
        }

        /**
         * A host name the console answers for, as browsers send it in {@code Host}: the name it is
         * served under ({@code ops.example.com}: any port) or with its port
         * ({@code ops.example.com:8443}). {@code localhost} and IP addresses are always answered;
         * other names only when allowed here or by {@link #allowedOrigin}, so that a page of
         * another site cannot read the console by pointing its own name at the console's address.
         *
         * @throws NullPointerException if null
         * @throws IllegalArgumentException if not a host name with an optional port
         */
        public Builder allowedHost(String host) {
            Objects.requireNonNull(host, "host must not be null");
            if (!host.matches("[A-Za-z0-9]([A-Za-z0-9.-]{0,252})(:\\d{1,5})?")) {
                throw new IllegalArgumentException("allowedHost must be a host name with an optional port, e.g."
                        + " ops.example.com or ops.example.com:8443, was '" + host + "'");
            }
            allowedHosts.add(host.toLowerCase(Locale.ROOT));
            return this;
        }

        /**
         * Where tasks are read and acted on. Required. A runtime's own is {@code runtime.client()}.
         *
         * @throws NullPointerException if null
         */
        public Builder client(SasClient client) {
            this.client = Objects.requireNonNull(client, "client must not be null");
            return this;
        }

        /**
         * The token an operator enters to resubmit and cancel. Without one (the default, or null
         * here) the console is read-only. Use a long random value (32 characters or more) kept out
         * of the source, e.g. from an environment variable; it is never logged or shown.
         *
         * @param token the token, or null for a read-only console
         * @throws IllegalArgumentException if shorter than {@value SasConsole#MIN_TOKEN_LENGTH}
         *     characters, or it has whitespace or control characters (it travels in a header)
         */
        public Builder actionToken(String token) {
            if (token != null) {
                if (token.length() < MIN_TOKEN_LENGTH) {
                    throw new IllegalArgumentException("actionToken must be at least " + MIN_TOKEN_LENGTH
                            + " characters, was " + token.length() + "; use a long random value");
                }
                if (!token.chars().allMatch(c -> c > 0x20 && c < 0x7f)) {
                    throw new IllegalArgumentException("actionToken must be printable ASCII without spaces (it is"
                            + " sent in an HTTP header)");
                }
            }
            this.token = token;
            return this;
        }

        /**
         * Whether step outputs are shown (default false: the console shows only that a step has an
         * output). Outputs are business data; turn this on only where everyone who can read the
         * console may see them. Task inputs are never shown.
         */
        public Builder showPayloads(boolean showPayloads) {
            this.showPayloads = showPayloads;
            return this;
        }

        /**
         * The title in the page's header, e.g. the application's name. Default {@value SasConsole#DEFAULT_TITLE}.
         *
         * @throws NullPointerException if null
         * @throws IllegalArgumentException if blank or longer than 80 characters
         */
        public Builder title(String title) {
            Objects.requireNonNull(title, "title must not be null");
            if (title.isBlank() || title.length() > 80) {
                throw new IllegalArgumentException("title must be 1 to 80 characters and not blank, was '" + title
                        + "'");
            }
            this.title = title;
            return this;
        }

        /**
         * An origin besides the console's own from which actions are accepted, for a reverse
         * proxy that changes the {@code Host} header: {@code https://ops.example.com}. Its host
         * is allowed as by {@link #allowedHost} too.
         *
         * @throws NullPointerException if null
         * @throws IllegalArgumentException if not of the form {@code scheme://host[:port]}
         */
        public Builder allowedOrigin(String origin) {
            Objects.requireNonNull(origin, "origin must not be null");
            URI uri;
            try {
                uri = URI.create(origin);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("allowedOrigin must be scheme://host[:port], was '" + origin + "'", e);
            }
            if (uri.getScheme() == null || uri.getHost() == null || (uri.getRawPath() != null
                    && !uri.getRawPath().isEmpty()) || uri.getRawQuery() != null) {
                throw new IllegalArgumentException("allowedOrigin must be scheme://host[:port] without a path, was '"
                        + origin + "'");
            }
            allowedOrigins.add(origin.toLowerCase(Locale.ROOT));
            String host = uri.getHost().toLowerCase(Locale.ROOT);
            allowedHosts.add(uri.getPort() == -1 ? host : host + ':' + uri.getPort());
            return this;
        }

        /**
         * The console.
         *
         * @throws IllegalStateException if no client was given
         */
        public SasConsole build() {
            if (client == null) {
                throw new IllegalStateException("client is required: call client(...) before build()");
            }
            return new SasConsole(this);
        }
    }
}
