package dev.sas.console;

import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * One HTTP request to the console, as {@link SasConsole#handle(ConsoleRequest)} takes it from any
 * server: a servlet, a Spring controller, Javalin, Vert.x. The console reads no body. Immutable and
 * thread-safe.
 *
 * @param method the HTTP method, e.g. {@code GET}
 * @param path the path below where the console is mounted, starting with {@code /}: {@code /} for
 *     the page, {@code /api/tasks} for the API. Not decoded: percent-escapes are decoded by the console
 * @param query the raw query string without {@code ?}, or null
 * @param headers request headers, first value of each; names are matched without regard to case
 * @param remoteAddress who sent it, for the audit log only (e.g. {@code 10.0.0.7}), or null
 */
public record ConsoleRequest(String method, String path, String query, Map<String, String> headers,
        String remoteAddress) {

    /**
     * @throws NullPointerException if {@code method}, {@code path} or {@code headers} is null
     * @throws IllegalArgumentException if {@code path} does not start with {@code /}
     */
    public ConsoleRequest {
        Objects.requireNonNull(method, "method must not be null");
        Objects.requireNonNull(path, "path must not be null");
        Objects.requireNonNull(headers, "headers must not be null");
        if (!path.startsWith("/")) {
            throw new IllegalArgumentException("path must start with '/', was '" + path + "'");
        }
        Map<String, String> lower = new TreeMap<>();
        headers.forEach((k, v) -> {
            if (k != null && v != null) {
                lower.putIfAbsent(k.toLowerCase(Locale.ROOT), v);
            }
        });
        headers = Map.copyOf(lower);
    }

    /**
     * A request without a remote address.
     *
     * @throws NullPointerException if {@code method}, {@code path} or {@code headers} is null
     * @throws IllegalArgumentException if {@code path} does not start with {@code /}
     */
    public static ConsoleRequest of(String method, String path, String query, Map<String, String> headers) {
        return new ConsoleRequest(method, path, query, headers, null);
    }

    /** The first value of the header named {@code name} (any case), or null. */
    public String header(String name) {
        return headers.get(name.toLowerCase(Locale.ROOT));
    }
}
