package dev.sas.core.spi;

import java.util.Objects;

/**
 * What became of one {@link Transition}: one of the constants, or {@link #refused(String)} with
 * the store's reason. Compare with {@link #kind()} (or {@code equals}). Immutable and thread-safe.
 */
public final class WriteOutcome {

    /** The kinds of outcome. */
    public enum Kind {
        /** Written now. */
        APPLIED,
        /**
         * Not written now because this very transition (same {@link Transition#id()}) was written
         * before: a replay, say after a lost commit acknowledgement. Its step row and events were
         * written with it, once.
         */
        APPLIED_ALREADY,
        /** Not written: the lease moved on, the task was released or moved, or the guard failed (fencing). */
        STALE,
        /** Not written: an operator asked to cancel, and the transition said to yield to that. */
        CANCEL_REQUESTED,
        /**
         * Not written: it holds a value the store cannot hold (see {@link StorableText}, or the
         * database refused a value with a data error). The other transitions of the batch are
         * unaffected; the task is unchanged.
         */
        REFUSED,
        /**
         * Not written now: another transaction holds the task's row (a node frozen or cut off in
         * the middle of a write), and the store did not wait for it. Only a store answers this, and
         * only for a {@link Transition.Guard#EXPIRED} transition (a supervisor's recovery), so that
         * one locked row does not hold up the recovery of the others. Nothing changed; the task is
         * still expired, and the next pass tries it again.
         */
        BUSY
    }

    /** Written now. */
    public static final WriteOutcome APPLIED = new WriteOutcome(Kind.APPLIED, null);
    /** Written before: a replay of the same transition (see {@link Kind#APPLIED_ALREADY}). */
    public static final WriteOutcome APPLIED_ALREADY = new WriteOutcome(Kind.APPLIED_ALREADY, null);
    /** Not written: fenced off (see {@link Kind#STALE}). */
    public static final WriteOutcome STALE = new WriteOutcome(Kind.STALE, null);
    /** Not written: an operator asked to cancel (see {@link Kind#CANCEL_REQUESTED}). */
    public static final WriteOutcome CANCEL_REQUESTED = new WriteOutcome(Kind.CANCEL_REQUESTED, null);
    /** Not written now: the row is held by another transaction (see {@link Kind#BUSY}). */
    public static final WriteOutcome BUSY = new WriteOutcome(Kind.BUSY, null);

    private final Kind kind;
    private final String reason;

    private WriteOutcome(Kind kind, String reason) {
        this.kind = kind;
        this.reason = reason;
    }

    /**
     * The transition was not written because it holds a value the store cannot hold.
     *
     * @param reason which value and why, e.g. "output of step 2 of task … has a NUL character U+0000
     *     at index 17" or the database's error; must not hold the value itself
     * @throws NullPointerException if {@code reason} is null
     */
    public static WriteOutcome refused(String reason) {
        return new WriteOutcome(Kind.REFUSED, Objects.requireNonNull(reason, "reason must not be null"));
    }

    /** Which outcome this is. */
    public Kind kind() {
        return kind;
    }

    /** For {@link Kind#REFUSED}, why; otherwise null. */
    public String reason() {
        return reason;
    }

    /** True when the transition is in the store: {@link Kind#APPLIED} or {@link Kind#APPLIED_ALREADY}. */
    public boolean isApplied() {
        return kind == Kind.APPLIED || kind == Kind.APPLIED_ALREADY;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof WriteOutcome w && w.kind == kind && Objects.equals(w.reason, reason);
    }

    @Override
    public int hashCode() {
        return kind.hashCode() * 31 + Objects.hashCode(reason);
    }

    /** The kind, and for a refusal its reason. */
    @Override
    public String toString() {
        return reason == null ? kind.name() : kind.name() + "(" + reason + ")";
    }
}
