package dev.sas.jdbc.internal;

import java.time.Duration;
import java.util.Objects;

/**
 * The network and statement time-outs of a pool the store creates: how long opening a connection
 * may take, how long a read on an open connection may block (what ends a half-open connection),
 * how long the server lets one statement run, and how long it lets a session sit idle inside a
 * transaction before ending it (what frees the row locks of a node frozen or cut off in the middle
 * of a write). Immutable. Not API.
 */
public record Timeouts(Duration connect, Duration socket, Duration statement, Duration idleInTransaction) {

    public Timeouts {
        Objects.requireNonNull(connect, "connect");
        Objects.requireNonNull(socket, "socket");
        Objects.requireNonNull(statement, "statement");
        Objects.requireNonNull(idleInTransaction, "idleInTransaction");
    }

    /** Whole seconds, rounded up: drivers that take seconds never get a shorter time-out than asked. */
    static long ceilSeconds(Duration d) {
        long s = d.getSeconds();
        return d.getNano() > 0 ? s + 1 : s;
    }

    /** Log form, e.g. {@code connect 10s, socket 60s, statement 30s, idle in transaction 5s}. */
    @Override
    public String toString() {
        return "connect " + text(connect) + ", socket " + text(socket) + ", statement " + text(statement)
                + ", idle in transaction " + text(idleInTransaction);
    }

    private static String text(Duration d) {
        return d.toMillis() % 1000 == 0 ? d.toSeconds() + "s" : d.toMillis() + "ms";
    }
}
