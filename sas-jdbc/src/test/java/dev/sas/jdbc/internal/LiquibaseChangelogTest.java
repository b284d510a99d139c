package dev.sas.jdbc.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The Liquibase changelog in the jar runs exactly the scripts SAS's own migrator runs, in its
 * order, on each database: a script added to {@link SchemaManager#SCRIPTS} and not to the changelog
 * fails here.
 */
class LiquibaseChangelogTest {

    @Test
    void the_changelog_lists_every_script_of_every_database_in_order() throws IOException {
        String changelog;
        try (InputStream in = getClass().getResourceAsStream("/dev/sas/jdbc/liquibase/changelog.xml")) {
            assertThat(in).as("changelog in the jar").isNotNull();
            changelog = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        List<String> paths = new ArrayList<>();
        Matcher m = Pattern.compile("path=\"([^\"]+)\"").matcher(changelog);
        while (m.find()) {
            paths.add(m.group(1));
        }
        List<String> expected = new ArrayList<>();
        for (SchemaManager.Script s : SchemaManager.SCRIPTS) {
            for (String db : List.of("h2", "postgresql", "mariadb")) {
                expected.add("dev/sas/jdbc/schema/" + db + "/V" + s.version() + "__" + s.name() + ".sql");
            }
        }
        assertThat(paths).containsExactlyElementsOf(expected);
        for (String path : paths) {
            assertThat(getClass().getResource("/" + path)).as(path).isNotNull();
        }
    }
}
