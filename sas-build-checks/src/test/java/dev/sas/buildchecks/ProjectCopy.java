package dev.sas.buildchecks;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * A copy of this project (its root POM and every module of it, without build output) in a
 * directory of its own, and Maven run on it. The nested builds never write into the real modules'
 * {@code target} directories, and never install: what they make stays in the copy or in a file
 * repository the test names. Plugins and dependencies come from the usual local repository (read,
 * or downloaded into it, never a {@code dev.sas} artifact).
 */
final class ProjectCopy {
    /** The project's root directory (the tests run in {@code sas-build-checks}). */
    static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    private static final Pattern MODULE = Pattern.compile("<module>([^<]+)</module>");
    private static final long TIMEOUT_MINUTES = 15;

    private final Path dir;

    private ProjectCopy(Path dir) {
        this.dir = dir;
    }

    /** Copies the project into {@code target/<name>} (emptied first). */
    static ProjectCopy of(String name) throws IOException {
        Path dir = ROOT.resolve("sas-build-checks/target").resolve(name);
        delete(dir);
        Files.createDirectories(dir);
        Files.copy(ROOT.resolve("pom.xml"), dir.resolve("pom.xml"));
        for (String module : modules(Files.readString(ROOT.resolve("pom.xml")))) {
            if (!module.equals("sas-build-checks")) {
                copyTree(ROOT.resolve(module), dir.resolve(module));
            }
        }
        // the copy does not check itself
        String pom = Files.readString(dir.resolve("pom.xml")).replace("<module>sas-build-checks</module>", "");
        Files.writeString(dir.resolve("pom.xml"), pom);
        return new ProjectCopy(dir);
    }

    static List<String> modules(String pom) {
        List<String> out = new ArrayList<>();
        Matcher m = MODULE.matcher(pom);
        while (m.find()) {
            out.add(m.group(1).strip());
        }
        return out;
    }

    Path dir() {
        return dir;
    }

    /** Adds a module to the copy's reactor (a project of its own, not a child of the parent). */
    void addModule(String name) throws IOException {
        Path pom = dir.resolve("pom.xml");
        Files.writeString(pom, Files.readString(pom).replace("</modules>", "  <module>" + name + "</module>\n  </modules>"));
    }

    /** The outcome of one Maven run: its exit code and its output (stdout and stderr). */
    record Run(int exitCode, String output) {
        /** The last lines of the output, for a failure message. */
        String tail() {
            String[] lines = output.split("\n");
            return String.join("\n", List.of(lines).subList(Math.max(0, lines.length - 60), lines.length));
        }
    }

    /** Runs Maven in the copy, batch mode, offline when the outer build is. */
    Run mvn(Map<String, String> env, String... args) throws IOException, InterruptedException {
        return mvn(env, Boolean.getBoolean("sas.maven.offline"), args);
    }

    /**
     * Runs Maven in the copy, batch mode; offline if asked (deploying is refused offline, even to
     * a file repository).
     */
    Run mvn(Map<String, String> env, boolean offline, String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        String home = System.getProperty("sas.maven.home");
        command.add(home == null || home.isBlank() ? "mvn" : Path.of(home, "bin", "mvn").toString());
        command.add("-B");
        if (offline) {
            command.add("-o");
        }
        command.addAll(List.of(args));
        return run(dir, env, command);
    }

    /** Runs a command, its output captured; fails the test when it does not end in time. */
    static Run run(Path workDir, Map<String, String> env, List<String> command) throws IOException, InterruptedException {
        Path log = Files.createTempFile("sas-build-check-", ".log");
        ProcessBuilder pb = new ProcessBuilder(command).directory(workDir.toFile()).redirectErrorStream(true)
                .redirectOutput(log.toFile());
        pb.environment().putAll(env);
        Process p = pb.start();
        if (!p.waitFor(TIMEOUT_MINUTES, TimeUnit.MINUTES)) {
            p.destroyForcibly().waitFor();
            String output = Files.readString(log);
            Files.delete(log);
            throw new AssertionError(command + " did not end within " + TIMEOUT_MINUTES + " minutes; output: "
                    + new Run(-1, output).tail());
        }
        String output = Files.readString(log);
        Files.delete(log);
        return new Run(p.exitValue(), output);
    }

    private static void copyTree(Path from, Path to) throws IOException {
        try (Stream<Path> files = Files.walk(from)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                Path rel = from.relativize(f);
                if (skipped(rel)) {
                    continue;
                }
                Path dest = to.resolve(rel.toString());
                if (Files.isDirectory(f)) {
                    Files.createDirectories(dest);
                } else {
                    Files.createDirectories(dest.getParent());
                    Files.copy(f, dest, StandardCopyOption.COPY_ATTRIBUTES);
                }
            }
        }
    }

    private static boolean skipped(Path rel) {
        for (Path part : rel) {
            String s = part.toString();
            if (s.equals("target") || s.equals("data") || s.startsWith(".") || s.endsWith(".mv.db")
                    || s.endsWith(".trace.db")) {
                return true;
            }
        }
        return false;
    }

    static void delete(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted((a, b) -> b.getNameCount() - a.getNameCount()).forEach(f -> {
                try {
                    Files.delete(f);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
