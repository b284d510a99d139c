package dev.sas.examples.orders;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Starts a {@link CrashWorker} (or a {@link PaymentWorker}) in a second JVM on this JVM's class path, follows its metrics, and
 * kills it with {@link Process#destroyForcibly()} (SIGKILL: no shutdown hook, no grace, no last
 * write). Thread-safe.
 */
final class WorkerProcess implements AutoCloseable {

    private final Process process;
    private final CountDownLatch ready = new CountDownLatch(1);
    private volatile long[] metrics = new long[5];

    private WorkerProcess(Process process) {
        this.process = process;
        Thread reader = new Thread(this::follow, "worker-stdout");
        reader.setDaemon(true);
        reader.start();
    }

    static WorkerProcess start(String dbUrl, Shop shop, String instanceId, Path log, Path operatorLog)
            throws IOException {
        List<String> cmd = javaCommand(CrashWorker.class, log);
        cmd.add("--db");
        cmd.add(dbUrl);
        cmd.add("--inventory");
        cmd.add(shop.inventory().uri().toString());
        cmd.add("--payment");
        cmd.add(shop.payment().uri().toString());
        cmd.add("--shipping");
        cmd.add(shop.shipping().uri().toString());
        cmd.add("--instance");
        cmd.add(instanceId);
        cmd.add("--operator-log");
        cmd.add(operatorLog.toString());
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().put(OrderRun.REPLY_KEY_ENV, OrderRun.REPLY_KEY_BASE64); // same keys on every node
        return new WorkerProcess(pb.start());
    }

    /** Starts a {@link PaymentWorker} consuming {@code queue} on the broker at {@code rabbitUri}. */
    static WorkerProcess startPaymentWorker(String rabbitUri, Shop shop, String queue, Path log) throws IOException {
        List<String> cmd = javaCommand(PaymentWorker.class, log);
        cmd.add("--rabbitmq");
        cmd.add(rabbitUri);
        cmd.add("--payment");
        cmd.add(shop.payment().uri().toString());
        cmd.add("--queue");
        cmd.add(queue);
        return new WorkerProcess(new ProcessBuilder(cmd).redirectErrorStream(true).start());
    }

    /** A command that runs {@code main} in a new JVM on this example's class path, logging to {@code log}. */
    private static List<String> javaCommand(Class<?> main, Path log) {
        List<String> cmd = new ArrayList<>();
        cmd.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-cp");
        cmd.add(classPath());
        cmd.add("-Dorg.slf4j.simpleLogger.logFile=" + log);
        cmd.add("-Dorg.slf4j.simpleLogger.showDateTime=true");
        cmd.add(main.getName());
        return cmd;
    }

    /** The class path of the code running this example: the exec:java class loader's, else java.class.path. */
    private static String classPath() {
        ClassLoader cl = WorkerProcess.class.getClassLoader();
        if (cl instanceof URLClassLoader ucl && ucl.getURLs().length > 0) {
            List<String> entries = new ArrayList<>();
            for (URL u : ucl.getURLs()) {
                try {
                    entries.add(Paths.get(u.toURI()).toString());
                } catch (Exception e) {
                    entries.add(u.getPath());
                }
            }
            return String.join(File.pathSeparator, entries);
        }
        return System.getProperty("java.class.path");
    }

    private void follow() {
        try (BufferedReader in = new BufferedReader(
                new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                if (line.startsWith("READY")) {
                    ready.countDown();
                } else if (line.startsWith("METRICS ")) {
                    String[] parts = line.substring(8).trim().split(" ");
                    long[] m = new long[parts.length];
                    for (int i = 0; i < parts.length; i++) {
                        m[i] = Long.parseLong(parts[i]);
                    }
                    metrics = m;
                } else {
                    System.err.println("[worker] " + line);
                }
            }
        } catch (IOException | RuntimeException e) {
            // the worker was killed mid-line
        }
    }

    /** Waits until the worker's runtime has started; false if it died or took too long. */
    boolean awaitReady(Duration timeout) throws InterruptedException {
        return ready.await(timeout.toMillis(), TimeUnit.MILLISECONDS) && process.isAlive();
    }

    long pid() {
        return process.pid();
    }

    /** The worker's last reported counters: retries, timeouts recovered, deadlines missed, stale, processed. */
    long[] metrics() {
        return metrics.clone();
    }

    /** SIGKILL, and wait until the process is gone. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            kill();
        }
    }
}
