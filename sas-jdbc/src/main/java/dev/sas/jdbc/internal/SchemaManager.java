package dev.sas.jdbc.internal;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.core.JdbiException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Applies the versioned schema scripts ({@code /dev/sas/jdbc/schema/<dialect>/V<n>__<name>.sql})
 * that the {@code <prefix>schema_version} table does not list yet. Scripts are idempotent
 * ({@code IF NOT EXISTS}), so two instances starting at once may both run one; the loser of the
 * race on the version row just re-reads. Not API.
 */
public final class SchemaManager {
    private static final int MAX_SCHEMA_ATTEMPTS = 10;
    /** One lock per dialect and table prefix: instances of one JVM set the schema up one at a time. */
    private static final java.util.concurrent.ConcurrentMap<String, Object> LOCKS =
            new java.util.concurrent.ConcurrentHashMap<>();

    private static final Logger log = LoggerFactory.getLogger(SchemaManager.class);

    /** Every schema version, in order. */
    static final List<Script> SCRIPTS = List.of(new Script(1, "init"), new Script(2, "runtime_workflows"),
            new Script(3, "claim_order"), new Script(4, "transition_id"), new Script(5, "parked"),
            new Script(6, "reply_outbox"), new Script(7, "agent_flow"), new Script(8, "lean_events"),
            new Script(9, "step_reply"), new Script(10, "trace_context"), new Script(11, "submit_hint"),
            new Script(12, "lean_indexes"), new Script(13, "start_at_submit"),
            new Script(14, "start_with_outcome"), new Script(15, "no_parked_index"),
            new Script(16, "schedules"), new Script(17, "awaiting_completion"));

    /** One script. */
    record Script(int version, String name) {
        String resource(Dialect d) {
            return "/dev/sas/jdbc/schema/" + d.name() + "/V" + version + "__" + name + ".sql";
        }
    }

    private final Jdbi jdbi;
    private final Dialect dialect;
    private final Tables tables;

    /** A manager for these tables on this database. */
    public SchemaManager(Jdbi jdbi, Dialect dialect, Tables tables) {
        this.jdbi = jdbi;
        this.dialect = dialect;
        this.tables = tables;
    }

    /**
     * Brings the schema up to date.
     *
     * @throws JdbiException if the database refuses, even after re-checking a few times in case
     *     another process was creating the same tables at the same moment
     */
    public void apply() {
        // Instances of one JVM (embedded H2 above all, whose DDL is neither transactional nor locked) set
        // the schema up one after the other; instances in other processes meet in the retries below.
        synchronized (LOCKS.computeIfAbsent(dialect.name() + ":" + tables.prefix(), k -> new Object())) {
            for (int attempt = 1; ; attempt++) {
                try {
                    applyOnce();
                    return;
                } catch (JdbiException e) {
                    // DDL commits on its own (H2, MariaDB): racing instances can each trip over the
                    // other's half-applied script, so re-check a few times before giving up.
                    if (attempt == MAX_SCHEMA_ATTEMPTS) {
                        throw e;
                    }
                    log.debug("schema update raced with another instance or failed (attempt {}); re-checking",
                            attempt, e);
                    // the other instance's tables may not be visible yet (H2 runs concurrent DDL apart)
                    try {
                        Thread.sleep(50L * attempt);
                    } catch (InterruptedException ie) {
                        Thread.currentThread().interrupt();
                        throw e;
                    }
                }
            }
        }
    }

    private void applyOnce() {
        jdbi.useTransaction(h -> {
            dialect.lockSchema(h, tables);
            h.execute("CREATE TABLE IF NOT EXISTS " + tables.schemaVersion()
                    + " (version INT NOT NULL PRIMARY KEY, description VARCHAR(200) NOT NULL)");
            Set<Integer> applied = new HashSet<>(h.createQuery("SELECT version FROM " + tables.schemaVersion())
                    .mapTo(Integer.class).list());
            boolean changed = false;
            for (Script s : SCRIPTS) {
                if (applied.contains(s.version())) {
                    continue;
                }
                for (String statement : statements(read(s.resource(dialect)))) {
                    h.execute(tables.apply(statement));
                }
                try {
                    h.createUpdate("INSERT INTO " + tables.schemaVersion() + " (version, description) VALUES (?, ?)")
                            .bind(0, s.version()).bind(1, s.name()).execute();
                    log.info("applied SAS schema V{}__{} for {} with table prefix '{}'",
                            s.version(), s.name(), dialect.name(), tables.prefix());
                } catch (JdbiException e) {
                    if (!dialect.isDuplicateKey(e)) {
                        throw e;
                    }
                }
                changed = true;
            }
            if (changed) {
                dialect.afterSchemaApplied(h, tables);
            }
        });
    }

    /**
     * Checks, for a store whose schema the application manages (Flyway, Liquibase), that every table
     * and column the scripts create is there, so a missing migration fails at start with the
     * script to apply rather than at the first task. Index-only scripts (V3, V5, V11, V12, V15) are
     * not checked; the value-only script V17 is checked by looking for a value it rewrites.
     *
     * @throws IllegalStateException naming the first missing table or column and its script
     */
    public void requireApplied() {
        List<String[]> probes = List.of(
                new String[] {"1", tables.task(), "task_id"}, new String[] {"1", tables.step(), "task_id"},
                new String[] {"1", tables.event(), "task_id"}, new String[] {"1", tables.lease(), "holder"},
                new String[] {"2", tables.runtimeWorkflow(), "instance_id"},
                new String[] {"4", tables.task(), "last_transition"},
                new String[] {"6", tables.statusOutbox(), "channel"}, new String[] {"6", tables.replyChannel(), "channel"},
                new String[] {"7", tables.agentGate(), "gate"}, new String[] {"7", tables.agentPermit(), "permit_id"},
                new String[] {"8", tables.event(), "then_type"}, new String[] {"9", tables.stepReply(), "outcome"},
                new String[] {"10", tables.task(), "trace_context"}, new String[] {"13", tables.task(), "started_step"},
                new String[] {"14", tables.task(), "pending_start_at"}, new String[] {"14", tables.event(), "before_type"},
                new String[] {"16", tables.schedule(), "last_fire_at"});
        for (String[] p : probes) {
            try {
                jdbi.useHandle(h -> h.createQuery("SELECT " + p[2] + " FROM " + p[1] + " WHERE 1 = 0")
                        .mapToMap().list());
            } catch (JdbiException e) {
                Script script = SCRIPTS.get(Integer.parseInt(p[0]) - 1);
                throw new IllegalStateException("createSchema is off, but " + p[1] + "." + p[2] + " cannot be read ("
                        + e.getCause() + "): apply SAS's schema scripts up to V" + SCRIPTS.size() + " (this one is in "
                        + script.resource(dialect).substring(1) + ", with ${prefix} = " + tables.prefix()
                        + ") before the store starts, or turn createSchema on (docs/jdbc.md, Flyway / Liquibase)", e);
            }
        }
        requireValuesRenamed();
    }

    /**
     * V17 changes no table, only stored values: a task still stored in the state an older build
     * wrote means it was not applied. Reads through an index that leads with the state (every dialect).
     */
    private void requireValuesRenamed() {
        boolean old = jdbi.withHandle(h -> h.createQuery("SELECT task_id FROM " + tables.task()
                + " WHERE state = 'AWAITING_REPLY'").setMaxRows(1).mapTo(String.class).findFirst().isPresent());
        if (old) {
            Script script = SCRIPTS.get(16);
            throw new IllegalStateException("createSchema is off, but " + tables.task() + " holds tasks in the state"
                    + " AWAITING_REPLY, which this build calls AWAITING_COMPLETION: stop every node of the older build,"
                    + " apply " + script.resource(dialect).substring(1) + " (with ${prefix} = " + tables.prefix()
                    + ") before the store starts, or turn createSchema on (UPGRADING.md)");
        }
    }

    /**
     * The statements of a script: comment lines dropped, split at a {@code ;} that ends a line,
     * except inside a {@code $$}-quoted body (a PostgreSQL function).
     */
    static List<String> statements(String script) {
        List<String> out = new ArrayList<>();
        StringBuilder current = new StringBuilder();
        boolean inBody = false;
        for (String line : script.split("\n")) {
            String trimmed = line.strip();
            if ((trimmed.startsWith("--") && !inBody) || trimmed.isEmpty()) {
                continue;
            }
            if (dollarQuotes(trimmed) % 2 == 1) {
                inBody = !inBody;
            }
            if (trimmed.endsWith(";") && !inBody) {
                current.append(trimmed, 0, trimmed.length() - 1);
                out.add(current.toString().strip());
                current.setLength(0);
            } else {
                current.append(trimmed).append('\n');
            }
        }
        if (!current.toString().isBlank()) {
            out.add(current.toString().strip());
        }
        return out;
    }

    private static int dollarQuotes(String line) {
        int n = 0;
        for (int i = line.indexOf("$$"); i >= 0; i = line.indexOf("$$", i + 2)) {
            n++;
        }
        return n;
    }

    private static String read(String resource) {
        try (InputStream in = SchemaManager.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException("schema script " + resource + " is missing from the classpath");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read schema script " + resource, e);
        }
    }

    /** Drops every table of this prefix (tests and tear-down only). */
    public void dropAll(Handle h) {
        for (String table : List.of(tables.event(), tables.step(), tables.task(), tables.lease(),
                tables.runtimeWorkflow(), tables.statusOutbox(), tables.replyChannel(), tables.agentPermit(),
                tables.agentGate(), tables.stepReply(), tables.schedule(), tables.schemaVersion())) {
            h.execute("DROP TABLE IF EXISTS " + table);
        }
        dialect.dropExtras(h, tables);
    }
}
