package dev.sas.examples.orders.services;

import java.time.Duration;
import java.util.Objects;
import java.util.SplittableRandom;

/**
 * The fault knobs of one {@link RemoteService}: a share of calls answered {@code 503}, added
 * latency, a share of calls that hang past the caller's deadline, and a share of orders that fail
 * for good (a declined card, a blocked SKU) until an operator lifts that fault.
 *
 * <p>Every decision is a pure function of the seed, the service, the idempotency key and the
 * call's number for that key (or, for permanent faults, of the seed and the order id), so a run
 * with the same seed injects the same faults whatever the thread interleaving. Transient faults
 * hit only the first {@link #faultyCallsPerKey()} calls of a key: a retried call eventually goes
 * through, so transient faults alone never exhaust a step's retries, and every compensation or
 * error in a run comes from a permanent fault. Permanent faults take disjoint slices of the
 * orders (see {@link #permanentSlice}), so an order fails for good at one service at most.
 *
 * <p>Thread-safe: knobs may be turned while the service runs.
 */
public final class Faults {

    private final String service;
    private final long seed;
    private volatile double failureRate;
    private volatile Duration latency = Duration.ZERO;
    private volatile double hangRate;
    private volatile Duration hangFor = Duration.ofSeconds(3);
    private volatile int faultyCallsPerKey = 2;
    private volatile double permanentFrom;
    private volatile double permanentTo;
    private volatile boolean permanentLifted;
    private volatile boolean down;

    /**
     * No faults until knobs are set.
     *
     * @param service the service name, mixed into every decision
     * @param seed the run's seed
     */
    public Faults(String service, long seed) {
        this.service = Objects.requireNonNull(service, "service must not be null");
        this.seed = seed;
    }

    /** No faults at all. */
    public static Faults none(String service) {
        return new Faults(service, 0);
    }

    /**
     * Share of calls answered {@code 503 Service Unavailable}, without doing anything.
     *
     * @throws IllegalArgumentException if not in [0, 1]
     */
    public Faults failureRate(double rate) {
        this.failureRate = share("failureRate", rate);
        return this;
    }

    /**
     * Added latency per call: a uniform spread between half and one and a half times this.
     *
     * @throws IllegalArgumentException if negative
     */
    public Faults latency(Duration latency) {
        this.latency = nonNegative("latency", latency);
        return this;
    }

    /**
     * Share of calls that do their work and then hang for {@code hangFor} before answering: the
     * reply is lost to a caller with a shorter deadline, which is what idempotency keys are for.
     *
     * @throws IllegalArgumentException if the rate is not in [0, 1] or the duration is negative
     */
    public Faults hangs(double rate, Duration hangFor) {
        this.hangRate = share("hangRate", rate);
        this.hangFor = nonNegative("hangFor", hangFor);
        return this;
    }

    /**
     * Transient faults (503s and hangs) hit at most this many calls of one idempotency key.
     *
     * @throws IllegalArgumentException if negative
     */
    public Faults faultyCallsPerKey(int calls) {
        if (calls < 0) {
            throw new IllegalArgumentException("faultyCallsPerKey must not be negative, was " + calls);
        }
        this.faultyCallsPerKey = calls;
        return this;
    }

    /**
     * Orders whose {@linkplain #fate fate} falls in {@code [from, to)} fail here for good until
     * {@link #liftPermanentFaults()}.
     *
     * @throws IllegalArgumentException unless {@code 0 <= from <= to <= 1}
     */
    public Faults permanentSlice(double from, double to) {
        if (!(0 <= from && from <= to && to <= 1)) {
            throw new IllegalArgumentException("permanent slice must satisfy 0 <= from <= to <= 1, was [" + from
                    + ", " + to + ")");
        }
        this.permanentFrom = from;
        this.permanentTo = to;
        return this;
    }

    /**
     * An outage: while {@code down}, every call is answered {@code 503} and does nothing, whatever
     * its key (unlike the transient faults, which spare a key's later calls).
     */
    public void down(boolean down) {
        this.down = down;
    }

    /** True during an outage ({@link #down(boolean)}). */
    public boolean isDown() {
        return down;
    }

    /**
     * True if the order falls in this service's slice of permanent faults, lifted or not: the only
     * reason an order may fail here.
     */
    public boolean meetsPermanentFault(String orderId) {
        double f = fate(seed, orderId);
        return f >= permanentFrom && f < permanentTo;
    }

    /** The operator fixed the cause (unblocked the SKU, the customer updated the card). */
    public void liftPermanentFaults() {
        this.permanentLifted = true;
    }

    /** Share of orders failing here for good while the fault is on. */
    public double permanentRate() {
        return permanentLifted ? 0 : permanentTo - permanentFrom;
    }

    /** Transient faults may hit at most this many calls per key. */
    public int faultyCallsPerKey() {
        return faultyCallsPerKey;
    }

    /** How long a hung call waits before answering. */
    public Duration hangFor() {
        return hangFor;
    }

    /**
     * A number in [0, 1) fixed per seed and order number (the part of the order id after its last
     * {@code '-'}, so runs with different id prefixes meet the same faults): which permanent
     * fault, if any, the order meets.
     */
    public static double fate(long seed, String orderId) {
        String number = orderId.substring(orderId.lastIndexOf('-') + 1);
        return new SplittableRandom(seed * 0x9E3779B97F4A7C15L + number.hashCode()).nextDouble();
    }

    boolean unavailable(String key, int call) {
        return call <= faultyCallsPerKey && draw(key, call, 1) < failureRate;
    }

    boolean hangs(String key, int call) {
        return call <= faultyCallsPerKey && draw(key, call, 2) < hangRate;
    }

    boolean failsForGood(String orderId) {
        if (permanentLifted) {
            return false;
        }
        double f = fate(seed, orderId);
        return f >= permanentFrom && f < permanentTo;
    }

    Duration latency(String key, int call) {
        Duration l = latency;
        if (l.isZero()) {
            return l;
        }
        return Duration.ofNanos((long) (l.toNanos() * (0.5 + draw(key, call, 3))));
    }

    private double draw(String key, int call, int salt) {
        long h = ((seed * 31 + service.hashCode()) * 31 + key.hashCode()) * 31 + call;
        return new SplittableRandom(h * 31 + salt).nextDouble();
    }

    private static double share(String what, double rate) {
        if (!(rate >= 0 && rate <= 1)) {
            throw new IllegalArgumentException(what + " must be in [0, 1], was " + rate);
        }
        return rate;
    }

    private static Duration nonNegative(String what, Duration d) {
        Objects.requireNonNull(d, what + " must not be null");
        if (d.isNegative()) {
            throw new IllegalArgumentException(what + " must not be negative, was " + d);
        }
        return d;
    }

    @Override
    public String toString() {
        return service + "{503=" + failureRate + ", latency=" + latency + ", hangs=" + hangRate + " for " + hangFor
                + ", permanent=" + permanentRate() + ", faultyCallsPerKey=" + faultyCallsPerKey + '}';
    }
}
