package dev.sas.core;

import java.util.Objects;
import java.util.UUID;

/**
 * Identifies one task (one run of a workflow). Immutable and thread-safe.
 *
 * @param value the id as stored; never blank, at most {@value #MAX_LENGTH} characters
 */
public record TaskId(String value) {

    /** The longest id a store must accept. */
    public static final int MAX_LENGTH = 64;

    /**
     * @throws NullPointerException if {@code value} is null
     * @throws IllegalArgumentException if {@code value} is blank or longer than {@value #MAX_LENGTH}
     */
    public TaskId {
        Objects.requireNonNull(value, "task id must not be null");
        if (value.isBlank()) {
            throw new IllegalArgumentException("task id must not be blank");
        }
        if (value.length() > MAX_LENGTH) {
            throw new IllegalArgumentException(
                    "task id must be at most " + MAX_LENGTH + " characters, was " + value.length());
        }
    }

    /**
     * Wraps an existing id.
     *
     * @throws NullPointerException if {@code value} is null
     * @throws IllegalArgumentException if {@code value} is blank or too long
     */
    public static TaskId of(String value) {
        return new TaskId(value);
    }

    /** A new random id (a UUID). */
    public static TaskId random() {
        return new TaskId(UUID.randomUUID().toString());
    }

    @Override
    public String toString() {
        return value;
    }
}
