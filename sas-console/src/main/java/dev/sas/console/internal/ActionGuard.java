package dev.sas.console.internal;

import dev.sas.console.ConsoleRequest;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.List;
import java.util.Locale;

/**
 * Decides whether a request may carry out an operator action. An action needs all of:
 * <ul>
 *   <li>POST (a link, an image or a redirect cannot act);</li>
 *   <li>the configured token in the {@value #TOKEN_HEADER} header, compared in constant time. A
 *       page of another site cannot set that header on a cross-origin request without the
 *       console's consent (a CORS preflight the console never grants), and the console uses no
 *       cookie, so a forged request carries nothing that authorises it;</li>
 *   <li>when the browser says where the request comes from ({@code Origin},
 *       {@code Sec-Fetch-Site}), the console's own origin or one the host allowed.</li>
 * </ul>
 * Without a configured token every action is refused: the console is read-only. Thread-safe.
 */
public final class ActionGuard {

    /** The header that carries the operator's token. */
    public static final String TOKEN_HEADER = "X-SAS-Console-Token";

    private final byte[] tokenDigest;
    private final List<String> allowedOrigins;

    /**
     * @param token the action token, or null for a read-only console
     * @param allowedOrigins origins besides the console's own from which actions are accepted
     *     (e.g. a reverse proxy's public origin), as {@code scheme://host[:port]}
     */
    public ActionGuard(String token, List<String> allowedOrigins) {
        this.tokenDigest = token == null ? null : sha256(token);
        this.allowedOrigins = allowedOrigins.stream().map(o -> o.toLowerCase(Locale.ROOT)).toList();
    }

    /** Whether actions are possible at all. */
    public boolean enabled() {
        return tokenDigest != null;
    }

    /**
     * Why {@code request} may not act, or null if it may.
     */
    public Refusal check(ConsoleRequest request) {
        if (!"POST".equals(request.method())) {
            return new Refusal(405, "actions need POST");
        }
        if (tokenDigest == null) {
            return new Refusal(403, "this console is read-only: no action token is configured");
        }
        String fetchSite = request.header("Sec-Fetch-Site");
        if (fetchSite != null && !fetchSite.equals("same-origin") && !fetchSite.equals("none")) {
            return new Refusal(403, "actions are accepted only from the console's own pages (Sec-Fetch-Site: "
                    + fetchSite + ")");
        }
        String origin = request.header("Origin");
        if (origin != null && !sameOrigin(origin, request.header("Host"))
                && !allowedOrigins.contains(origin.toLowerCase(Locale.ROOT))) {
            return new Refusal(403, "actions are accepted only from the console's own origin, not " + origin);
        }
        String given = request.header(TOKEN_HEADER);
        if (given == null || given.isEmpty()) {
            return new Refusal(403, "this action needs the operator token (" + TOKEN_HEADER + " header)");
        }
        // digests of equal length: the comparison takes the same time whatever the token's length or content
        if (!MessageDigest.isEqual(sha256(given), tokenDigest)) {
            return new Refusal(403, "the operator token is wrong");
        }
        return null;
    }

    /** Whether {@code origin} is the origin the request was sent to: same host and port as its {@code Host}. */
    static boolean sameOrigin(String origin, String host) {
        if (host == null) {
            return false;
        }
        try {
            URI from = new URI(origin);
            if (from.getScheme() == null || from.getHost() == null) {
                return false; // "null" (a sandboxed frame, a file) or garbage
            }
            URI to = new URI(from.getScheme() + "://" + host);
            return from.getHost().equalsIgnoreCase(to.getHost()) && port(from) == port(to);
        } catch (URISyntaxException e) {
            return false;
        }
    }

    private static int port(URI uri) {
        return uri.getPort() != -1 ? uri.getPort() : "https".equalsIgnoreCase(uri.getScheme()) ? 443 : 80;
    }

    private static byte[] sha256(String s) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }

    /**
     * An action refused.
     *
     * @param status the HTTP status to answer
     * @param reason why, for the operator
     */
    public record Refusal(int status, String reason) {
    }
}
