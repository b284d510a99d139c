package dev.sas.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/**
 * CPU time spent, which a shared machine disturbs far less than wall time: this JVM's (every
 * thread, JIT and GC included) and the local database server's (all its processes, from
 * {@code /proc}). H2 runs inside the JVM, so it has no server figure.
 */
final class CpuTime {
    private static final long NANOS_PER_TICK = 1_000_000_000L / 100; // USER_HZ is 100 on Linux

    private CpuTime() {
    }

    /** CPU nanoseconds used by this JVM so far, or -1 if the platform does not say. */
    static long process() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            return os.getProcessCpuTime();
        }
        return -1;
    }

    /** CPU nanoseconds used so far by the processes of the local server of {@code kind}, or -1. */
    static long server(Target.Kind kind) {
        String command = switch (kind) {
            case POSTGRES -> "postgres";
            case MARIADB -> "mariadbd";
            case H2 -> null;
        };
        if (command == null) {
            return -1;
        }
        long ticks = 0;
        boolean found = false;
        try (Stream<Path> dirs = Files.list(Path.of("/proc"))) {
            for (Path d : (Iterable<Path>) dirs::iterator) {
                if (!d.getFileName().toString().chars().allMatch(Character::isDigit)) {
                    continue;
                }
                String stat;
                try {
                    stat = Files.readString(d.resolve("stat"));
                } catch (IOException gone) {
                    continue; // the process ended meanwhile
                }
                int open = stat.indexOf('(');
                int close = stat.lastIndexOf(')');
                if (open < 0 || close < open || !stat.substring(open + 1, close).equals(command)) {
                    continue;
                }
                String[] f = stat.substring(close + 2).split(" ");
                ticks += Long.parseLong(f[11]) + Long.parseLong(f[12]); // utime, stime
                found = true;
            }
        } catch (IOException | RuntimeException e) {
            return -1;
        }
        return found ? ticks * NANOS_PER_TICK : -1;
    }
}
