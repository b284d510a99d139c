package dev.sas.core.spi;

import java.time.Instant;

/**
 * A store's moves of tasks between versions of their workflow, an optional capability
 * ({@link StateStore#versionMoves()}). Implementations are thread-safe.
 */
public interface VersionMoves {

    /**
     * Moves a task, atomically: under the task's row lock, a task that is absent answers
     * {@link VersionMove.Kind#NOT_FOUND}; at another version than {@link VersionMove#fromVersion()},
     * {@code OTHER_VERSION}; one {@link TaskDecisions#moveVersion} refuses, {@code NOT_MOVABLE};
     * one whose current step or a step row has no place of its own ({@link VersionMove#plan}),
     * {@code UNMAPPED_STEP}. Otherwise, in one transaction and fenced on what was read (lease,
     * state, holder), the store writes the decided change, the new version, current step (index,
     * name, step timeout), increments the lease (so that a write another party decided from the row
     * before the move, such as parking the old version's due tasks, is fenced off), gives each step row its new index and name (outputs and attempts kept),
     * and records the {@link VersionMove#event} (also to the task's status channel):
     * {@code MOVED}. A claim (a running step, an awaited completion) is never moved under its holder.
     *
     * @param now the store's time
     * @throws NullPointerException if an argument is null
     */
    VersionMove.Result move(VersionMove move, Instant now);
}
