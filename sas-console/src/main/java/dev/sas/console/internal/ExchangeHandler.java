package dev.sas.console.internal;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import dev.sas.console.ConsoleRequest;
import dev.sas.console.ConsoleResponse;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * Serves the console on the JDK's {@code com.sun.net.httpserver}, under whatever context path it
 * was mounted at. Thread-safe.
 */
public final class ExchangeHandler implements HttpHandler {

    /** Request bodies are never read; at most this much is drained so the connection can be reused. */
    private static final int MAX_DRAIN = 64 * 1024;

    private final Function<ConsoleRequest, ConsoleResponse> console;

    /** @param console the console's request handling */
    public ExchangeHandler(Function<ConsoleRequest, ConsoleResponse> console) {
        this.console = console;
    }

    @Override
    public void handle(HttpExchange exchange) throws IOException {
        try (exchange) {
            drain(exchange.getRequestBody());
            String context = exchange.getHttpContext().getPath();
            String raw = exchange.getRequestURI().getRawPath();
            String path = raw.length() > context.length() && raw.startsWith(context) ? raw.substring(context.length())
                    : "/";
            if (!context.endsWith("/") && raw.equals(context)) {
                // relative links of the page need the trailing slash
                exchange.getResponseHeaders().set("Location", context + "/");
                exchange.sendResponseHeaders(308, -1);
                return;
            }
            if (!path.startsWith("/")) {
                path = "/" + path;
            }
            Map<String, String> headers = new HashMap<>();
            exchange.getRequestHeaders().forEach((name, values) -> {
                if (!values.isEmpty()) {
                    headers.put(name, values.get(0));
                }
            });
            InetSocketAddress remote = exchange.getRemoteAddress();
            ConsoleRequest request = new ConsoleRequest(exchange.getRequestMethod(), path,
                    exchange.getRequestURI().getRawQuery(), headers,
                    remote == null ? null : remote.getAddress().getHostAddress());
            ConsoleResponse response = console.apply(request);
            response.headers().forEach((k, v) -> exchange.getResponseHeaders().put(k, List.of(v)));
            byte[] body = response.body();
            boolean head = exchange.getRequestMethod().equals("HEAD");
            exchange.sendResponseHeaders(response.status(), head || body.length == 0 ? -1 : body.length);
            if (!head && body.length > 0) {
                try (OutputStream out = exchange.getResponseBody()) {
                    out.write(body);
                }
            }
        }
    }

    private static void drain(InputStream in) throws IOException {
        byte[] buf = new byte[4096];
        int total = 0;
        int n;
        while (total < MAX_DRAIN && (n = in.read(buf)) > 0) {
            total += n;
        }
    }
}
