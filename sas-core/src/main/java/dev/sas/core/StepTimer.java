package dev.sas.core;

import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.function.Function;

/** A durable timer step's instant: {@code after} its start, or the instant {@code until} computes. Immutable. */
record StepTimer<I>(Duration after, Function<StepContext<I>, Instant> until) {

    Instant firesAt(StepContext<I> context, Instant now, String step) {
        if (after != null) {
            return now.plus(after);
        }
        return Objects.requireNonNull(until.apply(context), "timer '" + step + "': waitUntil returned null");
    }
}
