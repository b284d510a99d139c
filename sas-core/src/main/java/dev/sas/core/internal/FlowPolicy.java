package dev.sas.core.internal;

import dev.sas.core.AgentStatus;
import dev.sas.core.CircuitBreaker;
import dev.sas.core.FlowControl;
import dev.sas.core.spi.GateChange;
import dev.sas.core.spi.GateState;
import dev.sas.core.spi.GateView;
import dev.sas.core.spi.Permit;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

/**
 * What an agent's flow control means, decided from a gate's stored state: whether a call may go
 * now (breaker, capacity, rate limit), when a call held back should come again, and what a call's
 * outcome does to the breaker. Pure: every function takes the gate as the store read it (locked)
 * and the time, and returns the change to write ({@link dev.sas.core.spi.FlowControlStore#changeGate}).
 * The store keeps the numbers; this class is the only one that interprets them. Thread-safe.
 *
 * <p>The breaker: {@code CLOSED} counts calls in a fixed window and failures in a row, and opens
 * on either threshold; {@code OPEN} lets nothing through until {@code openUntil}; the first call
 * after that makes it {@code HALF_OPEN}, where up to {@code halfOpenProbes} calls go through as
 * probes: a failed probe opens it again, {@code halfOpenProbes} successful ones close it.
 *
 * <p>The rate limit is a generic cell rate algorithm (GCRA): calls start at least {@code 1/rate}
 * apart on average, with up to {@code burst} at once after a quiet spell, so in any interval of
 * length {@code t} at most {@code burst + t × rate} calls start.
 *
 * <p>When calls held back come again: one held by the rate limit takes the gate's next free slot
 * ({@code waitNext}, slots one emission interval apart), so a backlog comes back at the rate it can
 * go, never more than {@link #MAX_WAIT} ahead. One held for capacity comes back by itself after
 * {@link #CAPACITY_WAIT}, but normally sooner: each permit given back wakes the waiting task that
 * should go next ({@link Completion#wake()}: highest priority, then oldest), so waiting tasks are
 * not polled and keep their order. One held by an open breaker comes back when the cool-down ends
 * (spread over up to {@link #MAX_OPEN_SPREAD}, so the first one probes and the rest do not arrive
 * at once); those held while probes run are woken when the breaker closes. A call coming back is
 * admitted or held again like any other: these times are hints, the gate decides.
 */
final class FlowPolicy {
    /** When a call held back for capacity comes again if no permit given back woke it first. */
    static final Duration CAPACITY_WAIT = Duration.ofSeconds(5);
    /** Longest a call is sent into the future by the rate limit's queue. */
    static final Duration MAX_WAIT = Duration.ofSeconds(60);
    /** Longest wait of a call held back while the breaker's probes run (they wake it when they close it). */
    static final Duration MAX_PROBE_WAIT = Duration.ofSeconds(5);
    /** Calls held back by an open breaker come back spread over this long after the cool-down (at most half of it). */
    static final Duration MAX_OPEN_SPREAD = Duration.ofSeconds(2);
    /** Waiting tasks woken when a breaker closes, for an agent without a concurrency limit. */
    static final int WAKE_ON_CLOSE = 256;

    private FlowPolicy() {
    }

    /** Why a call was held back. */
    enum Reason {
        /** The endpoint had {@code maxConcurrentCalls} calls in flight. */
        CAPACITY,
        /** The endpoint's rate limit was reached. */
        RATE,
        /** The endpoint's breaker was open. */
        BREAKER_OPEN,
        /** The endpoint's breaker was half-open and its probes were running. */
        BREAKER_PROBING
    }

    /** The answer to a call asking to go through a gate. */
    sealed interface Admission {
    }

    /**
     * The call may go; it holds {@code permit} until it gives it back.
     *
     * @param halfOpened this call moved the breaker from OPEN to HALF_OPEN (it is the first probe)
     */
    record Granted(Permit permit, boolean halfOpened) implements Admission {
    }

    /**
     * The call must not go now.
     *
     * @param earliest when the gate itself could take it (breaker, capacity or rate), without the queue
     * @param retryAt when it should come again (its slot in the queue, when queued)
     */
    record Held(Reason reason, Instant earliest, Instant retryAt, String message) implements Admission {
    }

    /** What a call's outcome was, for the breaker. */
    enum Outcome {
        /** The service answered (a refusal too: it is healthy). */
        SUCCESS,
        /** The call failed, or got no reply by its deadline. */
        FAILURE,
        /** Nothing to count (already counted at the deadline). */
        NONE
    }

    /**
     * What a finished call did to the gate.
     *
     * @param breaker the breaker's state afterwards
     * @param opened this outcome opened the breaker
     * @param closed this outcome closed it
     * @param retryAt while the breaker is not closed, when this call's task should come again
     * @param message while the breaker is not closed, why (for a task that waits)
     * @param wake how many waiting tasks to wake now: one per permit given back while some may wait
     *     for capacity, many when the breaker closed
     */
    record Completion(CircuitBreaker.State breaker, boolean opened, boolean closed, Instant retryAt, String message,
            int wake) {
        /** The state of the gate could not be read or written: taken as closed, the outcome counts as usual. */
        static final Completion UNKNOWN = new Completion(CircuitBreaker.State.CLOSED, false, false, null, null, 0);

        /** True when a failed call should wait instead of spending an attempt: the breaker is not closed. */
        boolean holdsBack() {
            return breaker != CircuitBreaker.State.CLOSED;
        }
    }

    /** The gate of one endpoint of one agent. */
    static String gate(String agent, String endpoint) {
        return agent + '/' + endpoint;
    }

    /**
     * Asks for a call through the gate: the breaker first (an open breaker whose cool-down is over
     * becomes half-open and this call its probe), then capacity, then the rate limit.
     *
     * <p>The permit counts until {@link #permitExpiry}: never before the call's deadline plus a
     * lease, so a holder that is starved (or dies) while its call may still run never lets the
     * gate reissue its share.
     *
     * @param enqueue whether a call held back takes a slot in the gate's queue (false when other
     *     endpoints are still to be asked; see {@link #enqueue})
     * @param completeBy the call's deadline (database time)
     */
    static GateChange<Admission> admit(GateView v, FlowControl fc, Instant now, String permitId, String holder,
            boolean enqueue, Instant completeBy) {
        Edit e = new Edit(v.state());
        boolean changed = false;
        boolean probe = false;
        boolean halfOpened = false;
        CircuitBreaker cb = fc.circuitBreaker().orElse(null);
        if (cb != null) {
            if (e.breaker == CircuitBreaker.State.OPEN) {
                if (now.isBefore(e.openUntil)) {
                    return held(v, fc, e, changed, Reason.BREAKER_OPEN, afterCoolDown(e, cb, permitId), now, enqueue,
                            "waiting for agent health: " + breakerText(v.gate(), e, cb));
                }
                e.breaker = CircuitBreaker.State.HALF_OPEN;
                e.breakerSince = now;
                e.probeSuccesses = 0;
                changed = true;
                halfOpened = true;
            }
            if (e.breaker == CircuitBreaker.State.HALF_OPEN) {
                if (v.probesInUse() >= cb.halfOpenProbes()) {
                    return held(v, fc, e, changed, Reason.BREAKER_PROBING, now.plus(probeWait(cb)), now, enqueue,
                            "waiting for agent health: " + breakerText(v.gate(), e, cb));
                }
                probe = true;
            }
        }
        if (fc.maxConcurrentCalls() > 0 && v.permitsInUse() >= fc.maxConcurrentCalls()) {
            return held(v, fc, e, changed, Reason.CAPACITY, now.plus(CAPACITY_WAIT), now, enqueue,
                    "waiting for agent capacity: " + describe(v.gate()) + " has " + v.permitsInUse() + " of "
                            + fc.maxConcurrentCalls() + " calls in flight");
        }
        if (fc.maxCallsPerSecond() > 0) {
            Duration interval = emissionInterval(fc);
            Instant tat = e.rateNext.isAfter(now) ? e.rateNext : now;
            Instant allowedAt = tat.minus(interval.multipliedBy(fc.burst() - 1L));
            if (allowedAt.isAfter(now)) {
                return held(v, fc, e, changed, Reason.RATE, allowedAt, now, enqueue, "waiting for agent rate limit: "
                        + describe(v.gate()) + " takes at most " + fc.maxCallsPerSecond() + " calls per second");
            }
            e.rateNext = tat.plus(interval);
        }
        Permit permit = new Permit(permitId, v.gate(), holder, probe, now, permitExpiry(fc, now, completeBy));
        return GateChange.<Admission>write(e.toState(now), new Granted(permit, halfOpened)).taking(permit);
    }

    /**
     * When a permit taken at {@code now} for a call due by {@code completeBy} stops counting unless
     * renewed: a lease after the later of the two. A call may legitimately run until its deadline
     * (the agent is told it, the runtime interrupts it then), and no renewal is needed for that,
     * so neither a starved holder nor a dead one lets another node take the permit's share while
     * the call may still run at the service; the lease past the deadline covers the clocks' error
     * and the time the runtime takes to notice the deadline. Only a call that overruns its
     * deadline is renewed, by a live holder, a lease at a time.
     */
    static Instant permitExpiry(FlowControl fc, Instant now, Instant completeBy) {
        Instant from = completeBy != null && completeBy.isAfter(now) ? completeBy : now;
        return from.plus(fc.permitLease());
    }

    private static GateChange<Admission> held(GateView v, FlowControl fc, Edit e, boolean changed, Reason reason,
            Instant earliest, Instant now, boolean enqueue, String message) {
        Instant retryAt = reason == Reason.RATE ? slot(e, earliest, now) : earliest;
        if (enqueue) {
            wait(fc, e, reason, retryAt, now);
            changed = true;
        }
        Held held = new Held(reason, earliest, retryAt, message + "; comes again at " + retryAt
                + (reason == Reason.CAPACITY ? " unless a permit given back wakes it sooner" : ""));
        return changed ? GateChange.write(e.toState(now), held) : GateChange.keep(held);
    }

    /** Notes a call held back until {@code retryAt}: a slot of the rate queue taken, or a task that may wait. */
    private static void wait(FlowControl fc, Edit e, Reason reason, Instant retryAt, Instant now) {
        if (reason == Reason.RATE) {
            e.waitNext = nextSlot(fc, retryAt, now);
        } else if (retryAt.isAfter(e.heldUntil)) {
            e.heldUntil = retryAt;
        }
    }

    /**
     * Notes, on the gate a call held back by every endpoint should come back to, that it waits
     * (taking a slot of the rate queue when the rate limit held it).
     *
     * @param held what this gate answered (without noting it)
     * @return when the call should come again
     */
    static GateChange<Instant> enqueue(GateView v, FlowControl fc, Held held, Instant now) {
        Edit e = new Edit(v.state());
        Instant retryAt = held.reason() == Reason.RATE ? slot(e, held.earliest(), now) : held.earliest();
        wait(fc, e, held.reason(), retryAt, now);
        return GateChange.write(e.toState(now), retryAt);
    }

    /** When a call held back by the open breaker comes again: after the cool-down, spread by the call's id. */
    private static Instant afterCoolDown(Edit e, CircuitBreaker cb, String callId) {
        Duration half = cb.openFor().dividedBy(2);
        long spreadMs = (half.compareTo(MAX_OPEN_SPREAD) < 0 ? half : MAX_OPEN_SPREAD).toMillis();
        return spreadMs <= 0 ? e.openUntil : e.openUntil.plusMillis(Math.floorMod(callId.hashCode(), spreadMs + 1));
    }

    private static Duration probeWait(CircuitBreaker cb) {
        return cb.openFor().compareTo(MAX_PROBE_WAIT) < 0 ? cb.openFor() : MAX_PROBE_WAIT;
    }

    /** The queue's next free slot, not before {@code earliest} and not past {@link #MAX_WAIT} (unless earliest is). */
    private static Instant slot(Edit e, Instant earliest, Instant now) {
        Instant queued = e.waitNext;
        Instant cap = now.plus(MAX_WAIT);
        if (queued.isAfter(cap)) {
            queued = cap;
        }
        return queued.isAfter(earliest) ? queued : earliest;
    }

    private static Instant nextSlot(FlowControl fc, Instant retryAt, Instant now) {
        Instant next = retryAt.plus(emissionInterval(fc));
        Instant cap = now.plus(MAX_WAIT);
        return next.isAfter(cap) && !retryAt.isAfter(cap) ? cap : next;
    }

    /** The rate limit's emission interval: 1 / maxCallsPerSecond. */
    static Duration emissionInterval(FlowControl fc) {
        return Duration.ofNanos(Math.max(1, Math.round(1_000_000_000d / fc.maxCallsPerSecond())));
    }

    /**
     * Counts a finished call: gives its permit back (when {@code giveBack}), and, with a breaker,
     * counts its outcome: while closed, in the window and in the run of failures, opening on either
     * threshold; while half-open, only probes count: one failure opens it again, enough successes
     * close it; while open, nothing counts.
     *
     * @param failure the failure to remember, or null
     */
    static GateChange<Completion> complete(GateView v, FlowControl fc, Instant now, Permit permit, Outcome outcome,
            String failure, boolean giveBack) {
        Edit e = new Edit(v.state());
        boolean changed = false;
        if (giveBack) {
            long held = Math.max(1, Duration.between(permit.acquiredAt(), now).toMillis());
            e.avgHoldMillis = e.avgHoldMillis == 0 ? held : (e.avgHoldMillis * 7 + held) / 8;
            changed = true;
        }
        boolean opened = false;
        boolean closed = false;
        CircuitBreaker cb = fc.circuitBreaker().orElse(null);
        if (cb != null && outcome != Outcome.NONE) {
            boolean failed = outcome == Outcome.FAILURE;
            if (e.breaker == CircuitBreaker.State.CLOSED) {
                if (!now.isBefore(e.windowStart.plus(cb.window()))) {
                    e.windowStart = now;
                    e.windowCalls = 0;
                    e.windowFailures = 0;
                }
                e.windowCalls++;
                if (failed) {
                    e.windowFailures++;
                    e.consecutiveFailures++;
                    e.lastFailure = failure;
                } else {
                    e.consecutiveFailures = 0;
                }
                boolean trip = cb.consecutiveFailures() > 0 && e.consecutiveFailures >= cb.consecutiveFailures()
                        || cb.failureRatePercent() > 0 && e.windowCalls >= cb.minimumCalls()
                                && e.windowFailures * 100L >= (long) cb.failureRatePercent() * e.windowCalls;
                if (trip) {
                    open(e, now, cb);
                    opened = true;
                }
                changed = true;
            } else if (e.breaker == CircuitBreaker.State.HALF_OPEN && permit.probe()) {
                if (failed) {
                    e.consecutiveFailures++;
                    e.lastFailure = failure;
                    open(e, now, cb);
                    opened = true;
                } else {
                    e.probeSuccesses++;
                    if (e.probeSuccesses >= cb.halfOpenProbes()) {
                        close(e, now);
                        closed = true;
                    }
                }
                changed = true;
            }
        }
        // someone may be waiting for this gate: a permit given back wakes the next one, a breaker
        // that closed wakes many
        boolean waiters = now.isBefore(e.heldUntil);
        int wake = 0;
        if (waiters && closed) {
            wake = fc.maxConcurrentCalls() > 0 ? fc.maxConcurrentCalls() : WAKE_ON_CLOSE;
        } else if (waiters && giveBack && fc.maxConcurrentCalls() > 0 && e.breaker == CircuitBreaker.State.CLOSED) {
            wake = 1;
        }
        Completion c;
        if (e.breaker == CircuitBreaker.State.CLOSED || cb == null) {
            c = new Completion(CircuitBreaker.State.CLOSED, opened, closed, null, null, wake);
        } else {
            Instant retryAt = e.breaker == CircuitBreaker.State.OPEN ? afterCoolDown(e, cb, permit.id())
                    : now.plus(probeWait(cb));
            if (retryAt.isAfter(e.heldUntil)) {
                e.heldUntil = retryAt;
            }
            changed = true;
            c = new Completion(e.breaker, opened, closed, retryAt, "waiting for agent health: "
                    + breakerText(v.gate(), e, cb) + "; comes again at " + retryAt, wake);
        }
        GateChange<Completion> change = changed ? GateChange.write(e.toState(now), c) : GateChange.keep(c);
        return giveBack ? change.givingBack(permit.id()) : change;
    }

    /** Closes the breaker and clears its counters (an operator's reset). Returns whether the gate existed. */
    static GateChange<Boolean> reset(GateView v, Instant now) {
        Edit e = new Edit(v.state());
        close(e, now);
        return GateChange.write(e.toState(now), v.exists());
    }

    private static void open(Edit e, Instant now, CircuitBreaker cb) {
        e.breaker = CircuitBreaker.State.OPEN;
        e.breakerSince = now;
        e.openUntil = now.plus(cb.openFor());
        e.probeSuccesses = 0;
    }

    private static void close(Edit e, Instant now) {
        e.breaker = CircuitBreaker.State.CLOSED;
        e.breakerSince = now;
        e.openUntil = Instant.EPOCH;
        e.windowStart = now;
        e.windowCalls = 0;
        e.windowFailures = 0;
        e.consecutiveFailures = 0;
        e.probeSuccesses = 0;
    }

    /** "the circuit breaker of agent 'a' endpoint 'e' is open until ... (after ...; last failure: ...)". */
    private static String breakerText(String gate, Edit e, CircuitBreaker cb) {
        String why = cb.consecutiveFailures() > 0 && e.consecutiveFailures >= cb.consecutiveFailures()
                ? e.consecutiveFailures + " failures in a row"
                : e.windowFailures + " of " + e.windowCalls + " calls failed";
        String state = e.breaker == CircuitBreaker.State.OPEN ? "is open until " + e.openUntil
                : "is half-open, probing with " + cb.halfOpenProbes() + (cb.halfOpenProbes() == 1 ? " call" : " calls");
        return "the circuit breaker of " + describe(gate) + " " + state + " (opened after " + why
                + (e.lastFailure != null ? "; last failure: " + e.lastFailure : "") + ")";
    }

    /** "agent 'a' endpoint 'e'" for gate "a/e". */
    static String describe(String gate) {
        int slash = gate.indexOf('/');
        return slash < 0 ? "agent '" + gate + "'"
                : "agent '" + gate.substring(0, slash) + "' endpoint '" + gate.substring(slash + 1) + "'";
    }

    /** The operator's view of a gate. */
    static AgentStatus status(GateView v) {
        GateState s = v.state();
        int slash = v.gate().indexOf('/');
        String agent = slash < 0 ? v.gate() : v.gate().substring(0, slash);
        String endpoint = slash < 0 ? FlowControl.DEFAULT_ENDPOINT : v.gate().substring(slash + 1);
        return new AgentStatus(agent, endpoint, s.breaker(), s.breakerSince(),
                s.breaker() == CircuitBreaker.State.OPEN ? s.openUntil() : null, v.permitsInUse(), v.probesInUse(),
                s.windowCalls(), s.windowFailures(), s.consecutiveFailures(), s.lastFailure(), s.updatedAt());
    }

    /** A gate's state, edited field by field and frozen again with {@link #toState}. */
    private static final class Edit {
        CircuitBreaker.State breaker;
        Instant breakerSince;
        Instant openUntil;
        Instant windowStart;
        int windowCalls;
        int windowFailures;
        int consecutiveFailures;
        int probeSuccesses;
        Instant rateNext;
        Instant waitNext;
        Instant heldUntil;
        long avgHoldMillis;
        String lastFailure;

        Edit(GateState s) {
            Objects.requireNonNull(s, "gate state must not be null");
            breaker = s.breaker();
            breakerSince = s.breakerSince();
            openUntil = s.openUntil();
            windowStart = s.windowStart();
            windowCalls = s.windowCalls();
            windowFailures = s.windowFailures();
            consecutiveFailures = s.consecutiveFailures();
            probeSuccesses = s.probeSuccesses();
            rateNext = s.rateNext();
            waitNext = s.waitNext();
            heldUntil = s.heldUntil();
            avgHoldMillis = s.avgHoldMillis();
            lastFailure = s.lastFailure();
        }

        GateState toState(Instant now) {
            return new GateState(breaker, breakerSince, openUntil, windowStart, windowCalls, windowFailures,
                    consecutiveFailures, probeSuccesses, rateNext, waitNext, heldUntil, avgHoldMillis, lastFailure, now);
        }
    }
}
