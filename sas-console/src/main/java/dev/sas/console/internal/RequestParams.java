package dev.sas.console.internal;

import dev.sas.core.TaskStatus;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * How the console's API reads a request: decoded path segments and query parameters, and the
 * parameter values it parses, each failure an {@link IllegalArgumentException} naming the parameter
 * (answered 400). Stateless. Not API.
 */
final class RequestParams {

    private RequestParams() {
    }

    static TaskStatus status(String s) {
        try {
            return TaskStatus.valueOf(s);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("status must be one of " + List.of(TaskStatus.values()) + ", was '" + s
                    + "'", e);
        }
    }

    static int parseInt(String name, String s) {
        try {
            return Integer.parseInt(s);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " must be a number, was '" + s + "'", e);
        }
    }

    static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s;
    }

    /** The decoded segments of {@code path}. */
    static List<String> segments(String path) {
        List<String> out = new ArrayList<>();
        for (String s : path.split("/")) {
            if (!s.isEmpty()) {
                out.add(decode(s));
            }
        }
        return out;
    }

    /** The decoded parameters of a query string; the first value of each name. */
    static Map<String, String> query(String raw) {
        Map<String, String> out = new HashMap<>();
        if (raw == null || raw.isEmpty()) {
            return out;
        }
        for (String pair : raw.split("&")) {
            int eq = pair.indexOf('=');
            String name = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
            String value = eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
            out.putIfAbsent(name, value);
        }
        return out;
    }

    /** Percent-decodes a path segment ('+' stays '+'). */
    private static String decode(String s) {
        return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
    }
}
