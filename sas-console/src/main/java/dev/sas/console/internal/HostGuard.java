package dev.sas.console.internal;

import dev.sas.console.ConsoleRequest;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Decides whether the console answers a request at all, reads included: a defence against DNS
 * rebinding, where a page of another site points its own host name at the console's address (a
 * loopback or internal one) and reads the answers as if same-origin. Such a request carries the
 * attacker's name in {@code Host}, so the console answers only for:
 * <ul>
 *   <li>{@code localhost} and IP literals ({@code 127.0.0.1}, {@code [::1]}, {@code 10.0.0.5}),
 *       which no one else's DNS can point anywhere;</li>
 *   <li>the host names the application allowed ({@code allowedHost}, and the hosts of its
 *       {@code allowedOrigin}s).</li>
 * </ul>
 * A request without {@code Host} is refused (HTTP/1.1 requires it), and so is one whose
 * {@code Origin}, when present, is neither the origin of its {@code Host} nor an allowed origin.
 * Thread-safe.
 */
public final class HostGuard {

    private static final Pattern IPV4 = Pattern.compile("\\d{1,3}(\\.\\d{1,3}){3}");
    private static final Pattern PORT = Pattern.compile("\\d{1,5}");

    private final Set<String> allowedHosts;
    private final List<String> allowedOrigins;

    /**
     * @param allowedHosts host names (any port) or {@code name:port}, lower case
     * @param allowedOrigins origins besides the request's own, lower case
     */
    public HostGuard(Set<String> allowedHosts, List<String> allowedOrigins) {
        this.allowedHosts = Set.copyOf(allowedHosts);
        this.allowedOrigins = List.copyOf(allowedOrigins);
    }

    /** Why the console does not answer {@code request}, or null if it does. Never echoes the header in full. */
    public String check(ConsoleRequest request) {
        String host = request.header("Host");
        if (host == null || host.isBlank()) {
            return "the request has no Host header";
        }
        if (!allowed(host.trim().toLowerCase(Locale.ROOT))) {
            return "this console does not answer for the host '" + printable(host) + "'; if it is served under"
                    + " that name, add it with SasConsole.Builder.allowedHost";
        }
        String origin = request.header("Origin");
        if (origin != null && !ActionGuard.sameOrigin(origin, host)
                && !allowedOrigins.contains(origin.toLowerCase(Locale.ROOT))) {
            return "this console does not answer pages of the origin '" + printable(origin) + "'";
        }
        return null;
    }

    private boolean allowed(String host) {
        String name = host;
        if (host.startsWith("[")) {
            int end = host.indexOf(']');
            // an IPv6 literal, with or without a port
            return end > 1 && (end == host.length() - 1 || (host.charAt(end + 1) == ':'
                    && PORT.matcher(host.substring(end + 2)).matches()));
        }
        int colon = host.lastIndexOf(':');
        if (colon >= 0) {
            if (!PORT.matcher(host.substring(colon + 1)).matches()) {
                return false;
            }
            name = host.substring(0, colon);
        }
        if (name.endsWith(".")) {
            name = name.substring(0, name.length() - 1); // "localhost." is localhost
        }
        return name.equals("localhost") || IPV4.matcher(name).matches() || allowedHosts.contains(name)
                || allowedHosts.contains(host);
    }

    /** At most 100 characters of {@code s}, control characters replaced: it goes into a log and an answer. */
    public static String printable(String s) {
        String cut = s.length() > 100 ? s.substring(0, 100) + "…" : s;
        StringBuilder b = new StringBuilder(cut.length());
        cut.codePoints().forEach(c -> b.appendCodePoint(Character.isISOControl(c) || (c >= 0xD800 && c <= 0xDFFF)
                ? '?' : c));
        return b.toString();
    }
}
