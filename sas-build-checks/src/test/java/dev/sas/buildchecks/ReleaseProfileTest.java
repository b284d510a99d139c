package dev.sas.buildchecks;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import dev.sas.buildchecks.ProjectCopy.Run;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import java.util.zip.ZipFile;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;

/**
 * {@code mvn -Prelease deploy}, as a release would run it, on a copy of this project: a throwaway
 * GPG key made here signs, and the deploy goes to a file repository in {@code target/}. Checks
 * that every deployed file has a signature that verifies with that key, every jar its sources and
 * javadoc jars, and that every module's effective POM links to the project itself (Maven used to
 * append the module's name to the inherited url and scm).
 *
 * <p>For time, the deploy builds the parent, the BOM and sas-core (a POM without a parent, the
 * parent and a library jar: every kind the project deploys); the effective-POM check covers every
 * module.
 */
class ReleaseProfileTest {
    private static final String URL = "https://sas.dev";
    private static final Map<String, String> SCM = Map.of("connection", "scm:git:https://github.com/sas-dev/sas.git",
            "developerConnection", "scm:git:ssh://git@github.com/sas-dev/sas.git",
            "url", "https://github.com/sas-dev/sas");
    private static final String PASSPHRASE = "release-check-passphrase";

    private static ProjectCopy copy;
    private static Path gnupgHome;
    private static String fingerprint;

    @BeforeAll
    static void throwawayKey() throws Exception {
        copy = ProjectCopy.of("release-check");
        // a short path: gpg-agent's socket lives here, and socket paths are limited to ~100 bytes
        gnupgHome = Files.createTempDirectory("sas-gpg");
        Run version = gpg(List.of("--version"));
        assertThat(version.exitCode()).as("gpg is needed (apt-get install gnupg): %s", version.output()).isZero();
        Run gen = gpg(List.of("--batch", "--pinentry-mode", "loopback", "--passphrase", PASSPHRASE,
                "--quick-gen-key", "SAS release check <release-check@sas.invalid>", "ed25519", "sign", "1d"));
        assertThat(gen.exitCode()).as(gen.output()).isZero();
        Run list = gpg(List.of("--batch", "--with-colons", "--list-secret-keys"));
        Matcher fpr = Pattern.compile("(?m)^fpr:+([0-9A-F]{40}):").matcher(list.output());
        assertThat(fpr.find()).as(list.output()).isTrue();
        fingerprint = fpr.group(1);
    }

    @AfterAll
    static void stopAgent() throws Exception {
        if (gnupgHome != null) {
            ProjectCopy.run(gnupgHome, Map.of("GNUPGHOME", gnupgHome.toString()),
                    List.of("gpgconf", "--kill", "gpg-agent"));
            ProjectCopy.delete(gnupgHome);
        }
    }

    @Test
    void release_profile_deploys_signed_jars_with_sources_and_javadoc() throws Exception {
        Path repo = copy.dir().resolve("deployed");
        Run deploy = copy.mvn(Map.of("GNUPGHOME", gnupgHome.toString(), "MAVEN_GPG_PASSPHRASE", PASSPHRASE), false,
                "-Prelease", "-pl", "dev.sas:sas-parent,dev.sas:sas-bom,dev.sas:sas-core", "deploy",
                "-DskipTests", "-Dmaven.install.skip=true", "-Denforcer.skip=true",
                "-DaltDeploymentRepository=check::" + repo.toUri());
        assertThat(deploy.exitCode()).as("mvn -Prelease deploy failed:\n%s", deploy.tail()).isZero();

        Map<String, Set<String>> byArtifact = deployedFiles(repo.resolve("dev/sas"));
        assertThat(byArtifact.keySet()).containsExactlyInAnyOrder("sas-parent", "sas-bom", "sas-core");
        List<String> problems = new ArrayList<>();
        for (Map.Entry<String, Set<String>> e : byArtifact.entrySet()) {
            Set<String> files = e.getValue();
            Set<String> kinds = new TreeSet<>();
            for (String f : files) {
                if (f.endsWith(".asc")) {
                    continue;
                }
                kinds.add(kind(f));
                if (!files.contains(f + ".asc")) {
                    problems.add(f + " has no signature");
                } else {
                    Path file = find(repo.resolve("dev/sas").resolve(e.getKey()), f);
                    Run verify = gpg(List.of("--batch", "--status-fd", "1", "--verify", file + ".asc", file.toString()));
                    if (verify.exitCode() != 0 || !verify.output().contains("VALIDSIG " + fingerprint)) {
                        problems.add(f + ".asc does not verify with the release key: " + verify.output());
                    }
                }
            }
            Set<String> expected = e.getKey().equals("sas-core") ? Set.of("pom", "jar", "sources", "javadoc") : Set.of("pom");
            if (!kinds.equals(expected)) {
                problems.add(e.getKey() + " deployed " + kinds + ", expected " + expected);
            }
        }
        assertThat(problems).as("deployed files in %s", repo).isEmpty();

        String coreJar = byArtifact.get("sas-core").stream().filter(n -> n.endsWith(".jar"))
                .filter(n -> !n.endsWith("-sources.jar") && !n.endsWith("-javadoc.jar")).findFirst().orElseThrow();
        Path core = find(repo.resolve("dev/sas/sas-core"), coreJar);
        assertThat(entries(sibling(core, "-sources.jar"))).contains("dev/sas/core/SasRuntime.java");
        // a modular javadoc: pages under dev.sas.core/dev/sas/core/
        assertThat(entries(sibling(core, "-javadoc.jar"))).anyMatch(n -> n.endsWith("dev/sas/core/SasRuntime.html"))
                .noneMatch(n -> n.contains("/internal/"));
    }

    @Test
    void every_module_links_to_the_project_not_to_a_page_named_after_the_module() throws Exception {
        Path out = copy.dir().resolve("effective-pom.xml");
        Run run = copy.mvn(Map.of(), "-q", "org.apache.maven.plugins:maven-help-plugin:3.5.2:effective-pom", "-Doutput=" + out);
        assertThat(run.exitCode()).as("mvn help:effective-pom failed:\n%s", run.tail()).isZero();

        DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
        f.setNamespaceAware(false);
        Document doc = f.newDocumentBuilder().parse(out.toFile());
        NodeList projects = doc.getElementsByTagName("project");
        Map<String, String> wrong = new TreeMap<>();
        int modules = 0;
        for (int i = 0; i < projects.getLength(); i++) {
            Element p = (Element) projects.item(i);
            String id = child(p, "artifactId");
            modules++;
            check(wrong, id + " url", child(p, "url"), URL);
            Element scm = childElement(p, "scm");
            for (Map.Entry<String, String> s : SCM.entrySet()) {
                check(wrong, id + " scm " + s.getKey(), scm == null ? null : child(scm, s.getKey()), s.getValue());
            }
        }
        assertThat(modules).as("modules in the effective POM").isEqualTo(projects(copy.dir()));
        assertThat(wrong).as("effective POM values (module and field -> value)").isEmpty();
    }

    /** The project in {@code dir} and every module below it, aggregators' own modules included. */
    private static int projects(Path dir) throws java.io.IOException {
        int n = 1;
        for (String module : ProjectCopy.modules(Files.readString(dir.resolve("pom.xml")))) {
            n += projects(dir.resolve(module));
        }
        return n;
    }

    private static void check(Map<String, String> wrong, String what, String actual, String expected) {
        if (!expected.equals(actual)) {
            wrong.put(what, actual);
        }
    }

    private static String child(Element e, String name) {
        Element c = childElement(e, name);
        return c == null ? null : c.getTextContent().strip();
    }

    private static Element childElement(Element e, String name) {
        for (Node n = e.getFirstChild(); n != null; n = n.getNextSibling()) {
            if (n instanceof Element c && c.getTagName().equals(name)) {
                return c;
            }
        }
        return null;
    }

    /** Artifact id to the names of its deployed files, without metadata and checksums. */
    private static Map<String, Set<String>> deployedFiles(Path group) throws IOException {
        Map<String, Set<String>> out = new TreeMap<>();
        try (Stream<Path> files = Files.walk(group)) {
            files.filter(Files::isRegularFile).forEach(p -> {
                String name = p.getFileName().toString();
                if (name.startsWith("maven-metadata") || name.matches(".*\\.(md5|sha1|sha256|sha512)$")) {
                    return;
                }
                String artifact = group.relativize(p).getName(0).toString();
                out.computeIfAbsent(artifact, k -> new TreeSet<>()).add(name);
            });
        }
        return out;
    }

    private static Path find(Path dir, String name) throws IOException {
        try (Stream<Path> files = Files.walk(dir)) {
            return files.filter(p -> p.getFileName().toString().equals(name)).findFirst().orElseThrow();
        }
    }

    /** pom, jar, sources or javadoc. */
    private static String kind(String file) {
        if (file.endsWith(".pom")) {
            return "pom";
        }
        if (file.endsWith("-sources.jar")) {
            return "sources";
        }
        if (file.endsWith("-javadoc.jar")) {
            return "javadoc";
        }
        return file.endsWith(".jar") ? "jar" : "unexpected " + file;
    }

    private static Path sibling(Path jar, String suffix) {
        String name = jar.getFileName().toString();
        return jar.resolveSibling(name.substring(0, name.length() - ".jar".length()) + suffix);
    }

    private static List<String> entries(Path jar) throws IOException {
        try (ZipFile z = new ZipFile(jar.toFile())) {
            return z.stream().map(e -> e.getName()).toList();
        }
    }

    private static Run gpg(List<String> args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add("gpg");
        command.addAll(args);
        try {
            return ProjectCopy.run(gnupgHome, Map.of("GNUPGHOME", gnupgHome.toString()), command);
        } catch (IOException e) {
            fail("gpg is needed to check the release profile (apt-get install gnupg): " + e.getMessage());
            throw e;
        }
    }
}
