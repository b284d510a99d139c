package dev.sas.core;

import java.util.Objects;

/**
 * Who carried out an operator action (resubmit, cancel, move) and why: recorded in the detail of the
 * task's {@link TaskEvent.Type#RESUBMITTED}, {@link TaskEvent.Type#CANCEL_REQUESTED} or
 * {@link TaskEvent.Type#VERSION_MOVED} event, so the
 * timeline in the console, the CLI and {@link SasClient#events} says {@code by alice: card
 * provider confirmed the refund}. Immutable.
 *
 * <pre>{@code
 * client.operations().cancel(taskId, OperatorNote.of("alice", "customer withdrew the order"));
 * }</pre>
 *
 * @param operator who acted: a user name or principal, 1 to {@value #MAX_OPERATOR_LENGTH} characters
 * @param reason why, or null; at most {@value #MAX_REASON_LENGTH} characters
 */
public record OperatorNote(String operator, String reason) {

    /** Longest operator name: 100 characters. */
    public static final int MAX_OPERATOR_LENGTH = 100;
    /** Longest reason: 500 characters. */
    public static final int MAX_REASON_LENGTH = 500;

    /**
     * @throws NullPointerException if {@code operator} is null
     * @throws IllegalArgumentException if {@code operator} is blank or too long, if {@code reason} is too
     *     long, or if either holds a control character (a line break would forge a log line)
     */
    public OperatorNote {
        Objects.requireNonNull(operator, "operator must not be null");
        operator = operator.strip();
        if (operator.isEmpty() || operator.length() > MAX_OPERATOR_LENGTH) {
            throw new IllegalArgumentException("operator must be 1 to " + MAX_OPERATOR_LENGTH
                    + " characters (not blank), was " + operator.length());
        }
        check("operator", operator);
        if (reason != null) {
            reason = reason.strip();
            if (reason.isEmpty()) {
                reason = null;
            } else if (reason.length() > MAX_REASON_LENGTH) {
                throw new IllegalArgumentException("reason must be at most " + MAX_REASON_LENGTH
                        + " characters, was " + reason.length() + "; shorten it");
            } else {
                check("reason", reason);
            }
        }
    }

    /**
     * A note naming {@code operator} and {@code reason}.
     *
     * @throws NullPointerException if {@code operator} is null
     * @throws IllegalArgumentException as the constructor
     */
    public static OperatorNote of(String operator, String reason) {
        return new OperatorNote(operator, reason);
    }

    /** The event detail: {@code by <operator>} or {@code by <operator>: <reason>}. */
    public String describe() {
        return reason == null ? "by " + operator : "by " + operator + ": " + reason;
    }

    private static void check(String name, String value) {
        for (int i = 0; i < value.length(); i++) {
            if (Character.isISOControl(value.charAt(i))) {
                throw new IllegalArgumentException(name + " must not contain control characters (found U+"
                        + String.format("%04X", (int) value.charAt(i)) + " at " + i + ")");
            }
        }
    }
}
