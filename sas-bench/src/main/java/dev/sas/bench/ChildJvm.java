package dev.sas.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Starts a node of a multi-JVM phase ({@link TakeoverNode}, {@link ScaleNode}) in its own JVM on
 * this JVM's class path, follows its output, and serves an H2 file database to it: an H2 file opens
 * in one process only, so both sides then reach it through an H2 TCP server on the loopback.
 */
final class ChildJvm {

    private ChildJvm() {
    }

    /**
     * Starts {@code main} with {@code args} in a new JVM (512 MiB heap, UTC, slf4j at WARN); its
     * standard output and error are merged. The caller ends it.
     */
    static Process start(Class<?> main, List<String> args) throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = new ArrayList<>();
        cmd.add(java);
        cmd.add("-Xmx512m");
        cmd.add("-Xss256k");
        cmd.add("-Djava.awt.headless=true");
        cmd.add("-Dorg.slf4j.simpleLogger.defaultLogLevel=warn");
        cmd.add("-Duser.timezone=UTC");
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(main.getName());
        cmd.addAll(args);
        return new ProcessBuilder(cmd).redirectErrorStream(true).start();
    }

    /**
     * Reads the child's output on a daemon thread until it ends: every line goes to {@code onLine};
     * the first {@code logged} lines that {@code onLine} does not claim (returns false) are logged.
     */
    static Thread follow(Process p, String name, int logged, java.util.function.Predicate<String> onLine) {
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                int n = 0;
                while ((line = in.readLine()) != null) {
                    if (!onLine.test(line) && n++ < logged) {
                        Bench.log("    " + name + ": " + line);
                    }
                }
            } catch (IOException | RuntimeException e) {
                // the child ended
            }
        }, name + "-output");
        reader.setDaemon(true);
        reader.start();
        return reader;
    }

    /** Ends a child: SIGKILL, then waits up to 10 s for it to go. */
    static void kill(Process p) throws InterruptedException {
        if (p != null && p.isAlive()) {
            p.destroyForcibly();
            p.waitFor(10, TimeUnit.SECONDS);
        }
    }

    /** Makes a node halt as soon as the process {@code parentPid} ends (even by SIGKILL), as sas-reliability's workers do. */
    static void dieWithParent(long parentPid) {
        ProcessHandle.of(parentPid).ifPresentOrElse(
                h -> h.onExit().thenRun(() -> Runtime.getRuntime().halt(3)),
                () -> Runtime.getRuntime().halt(3));
    }

    /**
     * A database that several JVMs can open: the target itself, or for an H2 file target an H2 TCP
     * server on the loopback serving a database named {@code name} in the target's directory.
     * Closing stops the server, if any.
     */
    record Shared(Target target, org.h2.tools.Server server) implements AutoCloseable {

        static Shared of(Target t, String name) throws IOException, java.sql.SQLException {
            if (t.kind() != Target.Kind.H2) {
                return new Shared(t, null);
            }
            int port = freeLoopbackPort();
            String dir = Bench.h2Dir(t).toAbsolutePath().toString();
            org.h2.tools.Server server = org.h2.tools.Server.createTcpServer("-tcpPort", Integer.toString(port), "-ifNotExists")
                    .start();
            return new Shared(t.withUrl("jdbc:h2:tcp://127.0.0.1:" + port + "/" + dir + "/" + name + ";LOCK_TIMEOUT=10000"),
                    server);
        }

        @Override
        public void close() {
            if (server != null) {
                server.stop();
            }
        }
    }

    private static int freeLoopbackPort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }
}
