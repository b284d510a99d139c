package dev.sas.examples.orders;

import dev.sas.core.Alert;
import dev.sas.core.AlertSink;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The operator's log: every {@link Alert} the runtime raises (an order in {@code ERROR} or a
 * compensation that failed) and every operator action, appended to a file. Thread-safe.
 */
public final class OperatorLog implements AlertSink {

    private final Path file;
    private final List<String> lines = new ArrayList<>();
    private int alerts;

    /**
     * @param file the log file, created or appended to
     */
    public OperatorLog(Path file) {
        this.file = Objects.requireNonNull(file, "file must not be null");
    }

    @Override
    public void alert(Alert alert) {
        synchronized (this) {
            alerts++;
        }
        append(alert.at(), "ALERT order " + alert.businessKey() + " (task " + alert.taskId() + ") is " + alert.status()
                + (alert.stepName() != null ? " at step " + alert.stepName() : "") + ": " + alert.message());
    }

    /** Records an operator action. */
    public void action(Instant at, String what) {
        append(at, "ACTION " + what);
    }

    private synchronized void append(Instant at, String line) {
        String entry = at + " " + line;
        lines.add(entry);
        try {
            Files.writeString(file, entry + System.lineSeparator(), StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                    StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the operator log " + file, e);
        }
    }

    /** Alerts received so far. */
    public synchronized int alerts() {
        return alerts;
    }

    /**
     * Alerts in the file, including those other processes (the crash worker) appended.
     *
     * @throws UncheckedIOException if the file cannot be read
     */
    public synchronized long alertsInFile() {
        try {
            return Files.exists(file) ? Files.readAllLines(file).stream().filter(l -> l.contains(" ALERT ")).count() : 0;
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the operator log " + file, e);
        }
    }

    /** Every entry this process wrote so far, oldest first. */
    public synchronized List<String> lines() {
        return List.copyOf(lines);
    }

    /** The log file. */
    public Path file() {
        return file;
    }
}
