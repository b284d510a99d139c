package dev.sas.spring.boot;

import dev.sas.core.SasException;
import java.util.Objects;

/**
 * The Spring Boot starter is on the class path, {@code sas.enabled} is not false, and yet it could
 * not configure SAS: the application fails at start with this exception rather than run without
 * SAS. Spring Boot prints it as an "APPLICATION FAILED TO START" report with its
 * {@link #description()} and {@link #action()}. Immutable.
 */
public class SasStartupException extends SasException {

    private static final long serialVersionUID = 1L;

    private final String description;
    private final String action;

    /**
     * @param description what is missing or wrong
     * @param action what to do about it
     * @throws NullPointerException if an argument is null
     */
    public SasStartupException(String description, String action) {
        super(Objects.requireNonNull(description, "description must not be null") + " "
                + Objects.requireNonNull(action, "action must not be null"));
        this.description = description;
        this.action = action;
    }

    /** @return what is missing or wrong */
    public String description() {
        return description;
    }

    /** @return what to do about it */
    public String action() {
        return action;
    }
}
