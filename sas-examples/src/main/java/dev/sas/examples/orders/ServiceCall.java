package dev.sas.examples.orders;

import dev.sas.examples.orders.services.Form;
import java.util.Map;
import java.util.Objects;

/**
 * One request to a remote service: the path and the form fields. The idempotency key and the
 * timeout come from the step (see {@link ServiceAgent}).
 *
 * @param path the operation, e.g. {@code /charge}
 * @param fields the form fields
 */
public record ServiceCall(String path, Map<String, String> fields) {

    /** @throws NullPointerException if an argument is null */
    public ServiceCall {
        Objects.requireNonNull(path, "path must not be null");
        fields = Map.copyOf(Objects.requireNonNull(fields, "fields must not be null"));
    }

    /**
     * A {@code POST} to {@code path} with these name/value pairs.
     *
     * @throws IllegalArgumentException if the number of names and values is odd
     */
    public static ServiceCall post(String path, String... namesAndValues) {
        return new ServiceCall(path, Form.of(namesAndValues));
    }
}
