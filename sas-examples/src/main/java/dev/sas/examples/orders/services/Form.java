package dev.sas.examples.orders.services;

import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * {@code application/x-www-form-urlencoded} bodies, the wire format of the example's services
 * and of the order's stored input. Stateless and thread-safe.
 */
public final class Form {

    private Form() {
    }

    /**
     * Name/value pairs as an ordered map.
     *
     * @throws IllegalArgumentException if the number of arguments is odd
     * @throws NullPointerException if a name or value is null
     */
    public static Map<String, String> of(String... namesAndValues) {
        if (namesAndValues.length % 2 != 0) {
            throw new IllegalArgumentException("names and values must come in pairs, got " + namesAndValues.length
                    + " strings");
        }
        Map<String, String> map = new LinkedHashMap<>();
        for (int i = 0; i < namesAndValues.length; i += 2) {
            map.put(Objects.requireNonNull(namesAndValues[i], "name must not be null"),
                    Objects.requireNonNull(namesAndValues[i + 1], "value of " + namesAndValues[i] + " must not be null"));
        }
        return map;
    }

    /** Encodes the map as {@code a=1&b=2}. */
    public static String encode(Map<String, String> fields) {
        StringBuilder sb = new StringBuilder();
        fields.forEach((k, v) -> {
            if (sb.length() > 0) {
                sb.append('&');
            }
            sb.append(URLEncoder.encode(k, StandardCharsets.UTF_8)).append('=')
                    .append(URLEncoder.encode(v, StandardCharsets.UTF_8));
        });
        return sb.toString();
    }

    /** Decodes {@code a=1&b=2}; an empty or null body gives an empty map. */
    public static Map<String, String> decode(String body) {
        Map<String, String> map = new LinkedHashMap<>();
        if (body == null || body.isBlank()) {
            return map;
        }
        for (String pair : body.split("&")) {
            int eq = pair.indexOf('=');
            String k = eq < 0 ? pair : pair.substring(0, eq);
            String v = eq < 0 ? "" : pair.substring(eq + 1);
            map.put(URLDecoder.decode(k, StandardCharsets.UTF_8), URLDecoder.decode(v, StandardCharsets.UTF_8));
        }
        return map;
    }

    /**
     * The named field.
     *
     * @throws IllegalArgumentException if it is missing
     */
    public static String required(Map<String, String> fields, String name) {
        String v = fields.get(name);
        if (v == null) {
            throw new IllegalArgumentException("missing field '" + name + "'");
        }
        return v;
    }
}
