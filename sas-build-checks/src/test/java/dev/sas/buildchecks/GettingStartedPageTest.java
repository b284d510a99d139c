package dev.sas.buildchecks;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sas.buildchecks.ProjectCopy.Run;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * docs/getting-started.md, as a new user follows it: a fresh Maven project made of the page's text
 * (its dependency block, its Java files and its logback.xml, word for word) is built against this
 * project's modules and run. The modules come from the reactor of a copy of this project, the
 * fresh project being one more module of it, so nothing is installed into ~/.m2. The project
 * around the page's dependencies adds only what a new project has anyway: coordinates, Java 17
 * and pinned plugin versions.
 */
class GettingStartedPageTest {
    private static final Pattern BLOCK = Pattern.compile("(?ms)^```(\\w+)\\n(.*?)^```");
    private static final Pattern PACKAGE = Pattern.compile("(?m)^package ([\\w.]+);");
    private static final Pattern CLASS = Pattern.compile("(?m)^public (?:final )?class (\\w+)");
    private static final Pattern AGENT_LINE = Pattern.compile("(?m)^.* task=(\\S*) step=(\\S*) - mailing 'HELLO WORLD'.*$");

    @Test
    void the_page_builds_and_runs_as_written() throws Exception {
        String page = Files.readString(ProjectCopy.ROOT.resolve("docs/getting-started.md"));
        String dependencies = null;
        String logback = null;
        List<String> javaFiles = new ArrayList<>();
        Matcher m = BLOCK.matcher(page);
        while (m.find()) {
            String lang = m.group(1);
            String text = m.group(2);
            if (lang.equals("xml") && dependencies == null && text.contains("<dependencies>")) {
                dependencies = text;
            } else if (lang.equals("xml") && text.strip().startsWith("<configuration>")) {
                logback = text;
            } else if (lang.equals("java") && PACKAGE.matcher(text).find()) {
                javaFiles.add(text);
            }
        }
        assertThat(dependencies).as("the page's dependency block").isNotNull();
        assertThat(logback).as("the page's logback.xml").isNotNull();
        assertThat(javaFiles).as("complete Java files (with a package line) on the page").isNotEmpty();

        ProjectCopy copy = ProjectCopy.of("getting-started-check");
        Path app = copy.dir().resolve("getting-started");
        String mainClass = null;
        for (String java : javaFiles) {
            Matcher pkg = PACKAGE.matcher(java);
            Matcher cls = CLASS.matcher(java);
            assertThat(pkg.find() && cls.find()).as("a public class in\n%s", java).isTrue();
            Path file = app.resolve("src/main/java").resolve(pkg.group(1).replace('.', '/')).resolve(cls.group(1) + ".java");
            Files.createDirectories(file.getParent());
            Files.writeString(file, java);
            if (java.contains("public static void main(")) {
                mainClass = pkg.group(1) + "." + cls.group(1);
            }
        }
        assertThat(mainClass).as("a class with a main method").isNotNull();
        Files.createDirectories(app.resolve("src/main/resources"));
        Files.writeString(app.resolve("src/main/resources/logback.xml"), logback);
        Files.writeString(app.resolve("pom.xml"), pom(dependencies));
        copy.addModule("getting-started");

        Run build = copy.mvn(Map.of(), "-pl", "com.example:getting-started", "-am", "package",
                "org.apache.maven.plugins:maven-dependency-plugin:3.11.0:build-classpath",
                "-Dmdep.outputFile=target/classpath.txt", "-DincludeScope=runtime",
                "-Dmaven.test.skip=true", "-Dmaven.javadoc.skip=true", "-Dmaven.source.skip=true", "-Denforcer.skip=true");
        assertThat(build.exitCode()).as("building the page's project failed:\n%s", build.tail()).isZero();

        String classpath = app.resolve("target/classes") + java.io.File.pathSeparator
                + Files.readString(app.resolve("target/classpath.txt")).strip();
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Run run = ProjectCopy.run(app, Map.of(), List.of(java.toString(), "-cp", classpath, mainClass));

        assertThat(run.exitCode()).as("running %s:\n%s", mainClass, run.output()).isZero();
        assertThat(run.output()).as("its output").contains("PROCESSED: mailed HELLO WORLD")
                .doesNotContain("No SLF4J providers").doesNotContain("SLF4J(W)");
        Matcher agentLine = AGENT_LINE.matcher(run.output());
        assertThat(agentLine.find()).as("the agent's log line in\n%s", run.output()).isTrue();
        assertThat(agentLine.group(1)).as("task id on the agent's line: %s", agentLine.group()).isNotBlank();
        assertThat(agentLine.group(2)).as("step on the agent's line: %s", agentLine.group()).isEqualTo("2");
    }

    /** A new project's POM around the page's dependency block. */
    private static String pom(String dependencies) {
        return """
                <?xml version="1.0" encoding="UTF-8"?>
                <project xmlns="http://maven.apache.org/POM/4.0.0">
                  <modelVersion>4.0.0</modelVersion>
                  <groupId>com.example</groupId>
                  <artifactId>getting-started</artifactId>
                  <version>1.0</version>
                  <properties>
                    <maven.compiler.release>17</maven.compiler.release>
                    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
                  </properties>
                """ + dependencies + """
                  <build>
                    <plugins>
                      <plugin><artifactId>maven-clean-plugin</artifactId><version>3.5.0</version></plugin>
                      <plugin><artifactId>maven-resources-plugin</artifactId><version>3.5.0</version></plugin>
                      <plugin><artifactId>maven-compiler-plugin</artifactId><version>3.16.0</version></plugin>
                      <plugin><artifactId>maven-surefire-plugin</artifactId><version>3.6.1</version></plugin>
                      <plugin><artifactId>maven-jar-plugin</artifactId><version>3.5.1</version></plugin>
                    </plugins>
                  </build>
                </project>
                """;
    }
}
