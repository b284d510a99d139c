package dev.sas.rabbitmq;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;

/**
 * A JVM of a multi-process test on this JVM's class path (slf4j at WARN, UTC), whose output lines
 * are collected as they come; it halts when the test JVM ends, and {@link #kill()} SIGKILLs it.
 */
final class Child implements AutoCloseable {
    private final Process process;
    private final List<String> lines = new CopyOnWriteArrayList<>();

    private Child(Process process, String name) {
        this.process = process;
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
                    StandardCharsets.UTF_8))) {
                for (String line = in.readLine(); line != null; line = in.readLine()) {
                    lines.add(line);
                }
            } catch (IOException e) {
                // the child ended
            }
        }, name + "-output");
        reader.setDaemon(true);
        reader.start();
    }

    /** Starts {@code main} with {@code args}; the first argument the child sees is this JVM's pid. */
    static Child start(Class<?> main, String... args) throws IOException {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m", "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-Duser.timezone=UTC", "-cp",
                System.getProperty("java.class.path"), main.getName(), Long.toString(ProcessHandle.current().pid())));
        cmd.addAll(List.of(args));
        return new Child(new ProcessBuilder(cmd).redirectErrorStream(true).start(), main.getSimpleName());
    }

    /** In the child: halt as soon as the test JVM (pid {@code parent}) ends, even by SIGKILL. */
    static void dieWithParent(String parent) {
        ProcessHandle.of(Long.parseLong(parent)).ifPresentOrElse(
                h -> h.onExit().thenRun(() -> Runtime.getRuntime().halt(3)), () -> Runtime.getRuntime().halt(3));
    }

    /** Waits (up to 60 s) for a line starting with {@code prefix} and returns it. */
    String awaitLine(String prefix) {
        return Awaitility.await(prefix).atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(50))
                .failFast("the child ended: " + lines, () -> !process.isAlive() && lines.stream()
                        .noneMatch(l -> l.startsWith(prefix)))
                .until(() -> lines.stream().filter(l -> l.startsWith(prefix)).findFirst().orElse(null),
                        l -> l != null);
    }

    /** Every line so far. */
    List<String> lines() {
        return List.copyOf(lines);
    }

    /** SIGKILL, then waits for the process to go. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            kill();
        }
    }
}
