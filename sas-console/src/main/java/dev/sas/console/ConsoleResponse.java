package dev.sas.console;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Objects;

/**
 * The console's answer to a {@link ConsoleRequest}: copy the status, every header and the body to
 * your server's response. Immutable and thread-safe ({@link #body()} returns a copy).
 *
 * @param status the HTTP status code
 * @param headers the response headers, {@code Content-Type} and the security headers included
 * @param body the response body
 */
public record ConsoleResponse(int status, Map<String, String> headers, byte[] body) {

    /** @throws NullPointerException if {@code headers} or {@code body} is null */
    public ConsoleResponse {
        headers = Map.copyOf(Objects.requireNonNull(headers, "headers must not be null"));
        body = Objects.requireNonNull(body, "body must not be null").clone();
    }

    /** A copy of the body. */
    @Override
    public byte[] body() {
        return body.clone();
    }

    /** The body as UTF-8 text. */
    public String bodyText() {
        return new String(body, StandardCharsets.UTF_8);
    }

    /** The value of the header named {@code name} (exact case, as the console writes it), or null. */
    public String header(String name) {
        return headers.get(name);
    }
}
