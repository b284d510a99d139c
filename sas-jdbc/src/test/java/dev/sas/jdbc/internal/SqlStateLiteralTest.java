package dev.sas.jdbc.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sas.core.TaskStatus;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * No SQL of this module decides a task's state: a task-state literal ({@code 'PENDING'}) or a
 * {@code CASE} over the state appears in a string of the main sources only in the claim and in the
 * scan predicates (which rows a read considers, each decided again in Java by {@code TaskDecisions}).
 * Schema scripts are not Java and not read.
 */
class SqlStateLiteralTest {

    /** Where SQL may name states: {@code Class.member}, or {@code Class.*} for a whole class. */
    private static final Set<String> ALLOWED = Set.of(
            "ScanPredicates.*",
            "Dialect.CLAIMABLE_STATES",
            "Dialect.claimedState",
            // the claim: a claimed task with a cancel requested (not compensating) starts no step
            "Dialect.claimedStart",
            // the claim: its outbox rows name the start event by the claimed state
            "PostgresDialect.claimSql",
            // the upgrade check for a schema the application manages: no task left in a state's pre-0.3 name
            "SchemaManager.requireValuesRenamed");

    /** States' names before 0.3, rewritten by schema V17: no SQL may name them outside the upgrade check. */
    private static final List<String> FORMER_NAMES = List.of("AWAITING_REPLY");

    private static final Pattern STRING = Pattern.compile("\"((?:[^\"\\\\]|\\\\.)*)\"");
    private static final Pattern STATE_LITERAL = Pattern.compile("'(" + Stream.concat(
            Arrays.stream(TaskStatus.values()).map(TaskStatus::name), FORMER_NAMES.stream())
            .collect(Collectors.joining("|")) + ")'");
    private static final Pattern CASE_OVER_STATE = Pattern.compile("(?i)CASE\\s+WHEN\\s+(\\w+\\.)?state\\b");
    /** A member declared at class level (four spaces in): a field, a constant or a method. */
    private static final Pattern MEMBER = Pattern.compile(
            "^ {4}(?=\\w)(?:(?:public|protected|private|static|final|default|abstract)\\s+)*[\\w<>\\[\\], .?]+?\\s+(\\w+)\\s*[=(]");

    @Test
    void no_sql_string_of_the_main_sources_names_a_task_state_outside_the_claim_and_scan_predicates()
            throws IOException {
        List<String> hits = new ArrayList<>();
        try (Stream<Path> files = Files.walk(Path.of("src/main/java"))) {
            for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                hits.addAll(hits(f.getFileName().toString().replace(".java", ""), Files.readAllLines(f)));
            }
        }
        List<String> forbidden = hits.stream().filter(h -> !allowed(h)).toList();
        assertThat(forbidden).as("SQL naming a task state outside the allow-list (decide in TaskDecisions instead)")
                .isEmpty();
        // the scan can see what it looks for: the allowed places are found
        assertThat(hits).anyMatch(h -> h.startsWith("ScanPredicates.")).anyMatch(h -> h.startsWith("PostgresDialect.claimSql"))
                .anyMatch(h -> h.startsWith("SchemaManager.requireValuesRenamed"));
    }

    @Test
    void the_scan_finds_a_state_literal_and_a_case_over_state_and_names_their_member() {
        List<String> hits = hits("Example", List.of(
                "final class Example {",
                "    void cancel(Handle h) {",
                "        h.createUpdate(\"UPDATE task SET state = 'PENDING' WHERE task_id = ?\");",
                "    }",
                "",
                "    static final String X = \"SET s = CASE WHEN t.state IN (?) THEN 1 END\";",
                "    // 'ERROR' in a comment is no SQL",
                "    static final String OLD = \"WHERE state = 'AWAITING_REPLY'\";",
                "}"));
        assertThat(hits).hasSize(3);
        assertThat(hits.get(0)).startsWith("Example.cancel:3");
        assertThat(hits.get(1)).startsWith("Example.X:6");
        assertThat(hits.get(2)).as("a state's former name").startsWith("Example.OLD:8");
        assertThat(hits).noneMatch(SqlStateLiteralTest::allowed);
    }

    /** {@code Class.member:line: text} of every string literal naming a state or a CASE over it. */
    private static List<String> hits(String className, List<String> lines) {
        List<String> out = new ArrayList<>();
        String member = "?";
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            Matcher m = MEMBER.matcher(line);
            if (m.find()) {
                member = m.group(1);
            }
            String code = line.strip();
            if (code.startsWith("//") || code.startsWith("*") || code.startsWith("/*")) {
                continue;
            }
            Matcher s = STRING.matcher(line);
            while (s.find()) {
                String text = s.group(1);
                if (STATE_LITERAL.matcher(text).find() || CASE_OVER_STATE.matcher(text).find()) {
                    out.add(className + "." + member + ":" + (i + 1) + ": " + code);
                    break;
                }
            }
        }
        return out;
    }

    private static boolean allowed(String hit) {
        String where = hit.substring(0, hit.indexOf(':'));
        return ALLOWED.contains(where) || ALLOWED.contains(where.substring(0, where.indexOf('.')) + ".*");
    }
}
