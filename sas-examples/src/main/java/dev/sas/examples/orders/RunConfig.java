package dev.sas.examples.orders;

import java.nio.file.Path;
import java.time.Duration;

/**
 * The settings of one run of the example, from the command line. Immutable.
 *
 * @param orders how many orders to place
 * @param seed seeds every fault decision (and the orders' contents)
 * @param faults whether faults are injected at all
 * @param failureRate share of calls answered 503
 * @param latency added latency per call (spread ±50 %)
 * @param hangRate share of calls that hang past the step's deadline
 * @param blockedRate share of orders whose SKU the warehouse blocks (first step fails: ERROR)
 * @param declineRate share of orders whose card is declined (compensated: stock released)
 * @param undeliverableRate share of orders the carrier refuses (compensated: refund, release)
 * @param crash how the first runtime is killed mid-run, if at all
 * @param outage how long the payment service is down mid-run (every call answered 503), or zero
 * @param postgresUrl a PostgreSQL JDBC URL to use instead of the embedded H2 file, or null
 * @param dir where the H2 file and the logs go; null for a new temporary directory
 * @param verbose log to the console instead of {@code sas.log}
 * @param consolePort after the run, serve the operator console on this port (0: any free port) and
 *     keep the JVM running until interrupted; -1 (the default) ends the run as usual
 * @param rabbitUri a RabbitMQ broker's AMQP URI: the payment step then sends its charge to a payment
 *     agent worker in a separate JVM over RabbitMQ (killed and restarted mid-run); null for the
 *     in-process HTTP agent
 */
public record RunConfig(
        int orders,
        long seed,
        boolean faults,
        double failureRate,
        Duration latency,
        double hangRate,
        double blockedRate,
        double declineRate,
        double undeliverableRate,
        Crash crash,
        Duration outage,
        String postgresUrl,
        Path dir,
        boolean verbose,
        int consolePort,
        String rabbitUri) {

    /** {@link #consolePort} when no console is asked for. */
    public static final int NO_CONSOLE = -1;

    /** How the mid-run crash is staged. */
    public enum Crash {
        /** No crash. */
        NONE,
        /** A second JVM runs the first runtime and is killed with {@code destroyForcibly()}. */
        PROCESS,
        /** The first runtime runs in this JVM and is closed abruptly (no grace period). */
        IN_PROCESS
    }

    /** Usage text for {@code --help}. */
    public static final String USAGE = String.join("\n",
            "usage: OrderProcessingApp [options]",
            "  --orders N              orders to place (default 200)",
            "  --seed N                seed of every fault decision (default 42)",
            "  --no-faults             turn every fault off",
            "  --failure-rate X        share of calls answered 503 (default 0.15)",
            "  --latency-ms N          added latency per call (default 15)",
            "  --hang-rate X           share of calls hanging past the deadline (default 0.03)",
            "  --blocked-rate X        share of orders whose SKU is blocked: ERROR (default 0.03)",
            "  --decline-rate X        share of orders whose card is declined (default 0.04)",
            "  --undeliverable-rate X  share of orders the carrier refuses (default 0.03)",
            "  --crash[=process|in-process]  kill the first runtime mid-run (default: process)",
            "  --outage-ms N           the payment service is down for N ms mid-run, 0 for none (default 3000)",
            "  --postgres URL          use PostgreSQL, e.g. jdbc:postgresql://127.0.0.1:5432/test?user=postgres",
            "  --dir PATH              where the H2 file and logs go (default: a new temp directory)",
            "  --verbose               log to the console instead of sas.log",
            "  --console[=PORT]        after the run, keep the JVM up with the operator console on",
            "                          127.0.0.1:PORT (default: a free port) until Ctrl-C; also -Dsas.console=true|PORT",
            "  --rabbitmq URI          the payment agent runs as a separate worker process over RabbitMQ, e.g.",
            "                          amqp://guest:guest@127.0.0.1:5672; the worker is killed and restarted mid-run",
            "                          (no --crash, no payment outage in this mode)");

    /** The defaults: 200 orders, seed 42, faults on, a 3 s payment outage, no crash, H2. */
    public static RunConfig defaults() {
        return new RunConfig(200, 42, true, 0.15, Duration.ofMillis(15), 0.03, 0.03, 0.04, 0.03, Crash.NONE,
                Duration.ofSeconds(3), null, null, false, NO_CONSOLE, null);
    }

    /** The same settings with {@code dir} as the run's directory. */
    public RunConfig withDir(Path dir) {
        return new RunConfig(orders, seed, faults, failureRate, latency, hangRate, blockedRate, declineRate,
                undeliverableRate, crash, outage, postgresUrl, dir, verbose, consolePort, rabbitUri);
    }

    /**
     * Parses command-line arguments over the defaults.
     *
     * @throws IllegalArgumentException on an unknown option or a bad value, with the usage text
     */
    public static RunConfig parse(String... args) {
        RunConfig c = defaults();
        int orders = c.orders;
        long seed = c.seed;
        boolean faults = c.faults;
        double failureRate = c.failureRate;
        Duration latency = c.latency;
        double hangRate = c.hangRate;
        double blocked = c.blockedRate;
        double decline = c.declineRate;
        double undeliverable = c.undeliverableRate;
        Crash crash = c.crash;
        Duration outage = c.outage;
        String postgres = c.postgresUrl;
        Path dir = c.dir;
        boolean verbose = c.verbose;
        int consolePort = c.consolePort;
        String rabbit = c.rabbitUri;
        boolean outageSet = false;
        try {
            for (int i = 0; i < args.length; i++) {
                String a = args[i];
                switch (a) {
                    case "--orders" -> orders = Integer.parseInt(args[++i]);
                    case "--seed" -> seed = Long.parseLong(args[++i]);
                    case "--no-faults" -> faults = false;
                    case "--failure-rate" -> failureRate = Double.parseDouble(args[++i]);
                    case "--latency-ms" -> latency = Duration.ofMillis(Long.parseLong(args[++i]));
                    case "--hang-rate" -> hangRate = Double.parseDouble(args[++i]);
                    case "--blocked-rate" -> blocked = Double.parseDouble(args[++i]);
                    case "--decline-rate" -> decline = Double.parseDouble(args[++i]);
                    case "--undeliverable-rate" -> undeliverable = Double.parseDouble(args[++i]);
                    case "--crash", "--crash=process" -> crash = Crash.PROCESS;
                    case "--crash=in-process" -> crash = Crash.IN_PROCESS;
                    case "--outage-ms" -> {
                        outage = Duration.ofMillis(Long.parseLong(args[++i]));
                        outageSet = true;
                    }
                    case "--rabbitmq" -> rabbit = args[++i];
                    case "--postgres" -> postgres = args[++i];
                    case "--dir" -> dir = Path.of(args[++i]);
                    case "--verbose" -> verbose = true;
                    case "--console" -> consolePort = 0;
                    default -> {
                        if (!a.startsWith("--console=")) {
                            throw new IllegalArgumentException("unknown option '" + a + "'");
                        }
                        consolePort = Integer.parseInt(a.substring("--console=".length()));
                        if (consolePort < 0 || consolePort > 65_535) {
                            throw new IllegalArgumentException("--console port must be 0 to 65535, was " + consolePort);
                        }
                    }
                }
            }
        } catch (ArrayIndexOutOfBoundsException e) {
            throw new IllegalArgumentException("option '" + args[args.length - 1] + "' needs a value\n" + USAGE, e);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("bad number: " + e.getMessage() + "\n" + USAGE, e);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(e.getMessage() + "\n" + USAGE, e);
        }
        if (orders < 1) {
            throw new IllegalArgumentException("--orders must be at least 1, was " + orders);
        }
        if (outage.isNegative()) {
            throw new IllegalArgumentException("--outage-ms must not be negative, was " + outage.toMillis());
        }
        if (blocked + decline + undeliverable > 1) {
            throw new IllegalArgumentException("--blocked-rate, --decline-rate and --undeliverable-rate must add up to"
                    + " at most 1, were " + blocked + ", " + decline + ", " + undeliverable);
        }
        if (rabbit != null && crash != Crash.NONE) {
            throw new IllegalArgumentException("--rabbitmq and --crash cannot be combined: with --rabbitmq the payment"
                    + " worker process is the one killed mid-run");
        }
        if (rabbit != null && outageSet && !outage.isZero()) {
            throw new IllegalArgumentException("--rabbitmq and --outage-ms cannot be combined: the payment outage shows"
                    + " the in-process agent's circuit breaker, which the RabbitMQ worker does not have");
        }
        return new RunConfig(orders, seed, faults, failureRate, latency, hangRate, blocked, decline, undeliverable, crash,
                faults && rabbit == null ? outage : Duration.ZERO, postgres, dir, verbose, consolePort, rabbit);
    }
}
