package dev.sas.jdbc;

import static dev.sas.jdbc.Tasks.T0;
import static dev.sas.jdbc.Tasks.TIMEOUT;
import static dev.sas.jdbc.Tasks.newTask;
import static dev.sas.jdbc.Tasks.received;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.TaskInfo;
import dev.sas.core.TaskStatus;
import dev.sas.core.spi.ClaimedTask;
import dev.sas.core.spi.StepUpdate;
import dev.sas.core.spi.SubmitResult;
import dev.sas.core.spi.Transition;
import dev.sas.core.spi.WriteOutcome;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TimeZone;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Behaviour of the JDBC store beyond the contract, on each database. */
abstract class JdbcStoreBehaviourTest {

    String url;
    String prefix;
    JdbcStateStore store;

    abstract TestDb db();

    /** Whether the database lets a claim skip rows another transaction locked (H2 waits instead). */
    boolean skipsLockedRows() {
        return true;
    }

    /** Set by a case that changes the schema: its tables are dropped, not reused. */
    boolean schemaChanged;

    @BeforeEach
    void open() {
        url = db().url();
        prefix = pooled() ? SchemaPool.take(db(), url) : TestDb.randomPrefix();
        store = TestDb.builder(url, prefix).build();
    }

    @AfterEach
    void close() {
        if (store == null) {
            return; // skipped: the database is not configured
        }
        store.close();
        if (pooled() && !schemaChanged) {
            SchemaPool.give(db(), url, prefix);
        } else {
            db().drop(url, prefix);
        }
    }

    /** PostgreSQL and MariaDB reuse emptied tables between cases ({@link SchemaPool}); H2 is quick to create. */
    private boolean pooled() {
        return SchemaPool.pooled(db());
    }

    private TaskId submit(String key) {
        TaskId id = TaskId.random();
        store.submit(newTask(id, key, "in-" + key, T0), received(id, key, T0), null);
        return id;
    }

    /**
     * A key ending with a space, as an older version stored it (the client refuses such keys now),
     * and then the key without it: a distinct task where the database compares strings exactly; on
     * MariaDB and MySQL, which ignore trailing spaces, a refusal naming the stored key instead of a
     * retryable failure that no retry fixes. {@code find} never returns the other key's task.
     */
    @Test
    void a_key_differing_from_a_stored_one_only_by_trailing_spaces_is_a_new_task_or_a_refusal_naming_it() {
        TaskId padded = submit("k ");
        TaskId id = TaskId.random();
        if (db() == TestDb.MARIADB) {
            assertThatThrownBy(() -> store.submit(newTask(id, "k", "in-k", T0), received(id, "k", T0), null))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("businessKey 'k'")
                    .hasMessageContaining("stored key 'k '");
            assertThat(store.findByBusinessKey("wf", "k")).isEmpty();
        } else {
            assertThat(store.submit(newTask(id, "k", "in-k", T0), received(id, "k", T0), null).created()).isTrue();
            assertThat(store.findByBusinessKey("wf", "k")).contains(id);
        }
        assertThat(store.findByBusinessKey("wf", "k ")).contains(padded);
    }

    @Test
    void submit_joins_a_host_connection_and_commits_with_the_business_row() throws Exception {
        TaskId id = TaskId.random();
        schemaChanged = true; // a business table of its own, dropped only if the case gets that far
        try (Connection c = DriverManager.getConnection(url)) {
            try (Statement s = c.createStatement()) {
                s.execute("CREATE TABLE " + prefix + "orders (id VARCHAR(20) PRIMARY KEY)");
            }
            c.setAutoCommit(false);
            try (Statement s = c.createStatement()) {
                s.execute("INSERT INTO " + prefix + "orders (id) VALUES ('o-1')");
            }
            SubmitResult r = store.submit(newTask(id, "o-1", "{}", T0), received(id, "o-1", T0), c);
            assertThat(r.created()).isTrue();
            assertThat(c.isClosed()).isFalse();
            assertThat(store.find(id)).as("not visible before the host commits").isEmpty();
            c.commit();
            try (Statement s = c.createStatement();
                    ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM " + prefix + "orders")) {
                rs.next();
                assertThat(rs.getInt(1)).isEqualTo(1);
            }
            c.setAutoCommit(true);
            try (Statement s = c.createStatement()) {
                s.execute("DROP TABLE " + prefix + "orders");
            }
        }
        assertThat(store.find(id)).isPresent();
        assertThat(store.events(id)).extracting(TaskEvent::type).containsExactly(TaskEvent.Type.RECEIVED);
    }

    @Test
    void submit_joins_a_host_connection_and_rolls_back_with_it() throws Exception {
        TaskId id = TaskId.random();
        try (Connection c = DriverManager.getConnection(url)) {
            c.setAutoCommit(false);
            store.submit(newTask(id, "rb", "{}", T0), received(id, "rb", T0), c);
            c.rollback();
        }
        assertThat(store.find(id)).isEmpty();
        assertThat(store.events(id)).isEmpty();
        assertThat(store.findByBusinessKey("wf", "rb")).isEmpty();
    }

    @Test
    void submit_on_a_host_connection_in_auto_commit_mode_commits_task_and_event_together() throws Exception {
        TaskId id = TaskId.random();
        try (Connection c = DriverManager.getConnection(url)) {
            store.submit(newTask(id, "auto", "{}", T0), received(id, "auto", T0), c);
            assertThat(c.getAutoCommit()).isTrue();
        }
        assertThat(store.events(id)).hasSize(1);
    }

    @Test
    void submit_joins_a_jdbi_handle_and_commits_or_rolls_back_with_it() {
        TaskId committed = TaskId.random();
        TaskId rolledBack = TaskId.random();
        try (Handle h = Jdbi.open(url)) {
            h.begin();
            store.submit(newTask(committed, "h-commit", "{}", T0), received(committed, "h-commit", T0), h);
            h.commit();
            h.begin();
            store.submit(newTask(rolledBack, "h-rollback", "{}", T0), received(rolledBack, "h-rollback", T0), h);
            h.rollback();
            assertThat(h.isClosed()).isFalse();
        }
        assertThat(store.find(committed)).isPresent();
        assertThat(store.events(committed)).hasSize(1);
        assertThat(store.find(rolledBack)).isEmpty();
        assertThat(store.events(rolledBack)).isEmpty();
    }

    @Test
    void duplicate_submit_inside_a_host_transaction_leaves_the_transaction_usable() throws Exception {
        TaskId first = submit("dup-tx");
        TaskId second = TaskId.random();
        try (Connection c = DriverManager.getConnection(url)) {
            c.setAutoCommit(false);
            SubmitResult r = store.submit(newTask(second, "dup-tx", "{}", T0), received(second, "dup-tx", T0), c);
            assertThat(r).isEqualTo(new SubmitResult(first, false));
            try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT 1")) {
                assertThat(rs.next()).isTrue();
            }
            c.commit();
        }
        assertThat(store.events(first)).hasSize(1);
    }

    @Test
    void submit_with_an_unknown_transaction_type_names_the_type() {
        TaskId id = TaskId.random();
        assertThatThrownBy(() -> store.submit(newTask(id, "x", "{}", T0), received(id, "x", T0), "tx"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("java.lang.String");
    }

    @Test
    void input_too_long_for_its_column_fails_naming_the_task_and_stores_nothing() throws Exception {
        schemaChanged = true;
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
            s.execute(db().shrinkInputColumnSql(prefix + "task", 10));
        }
        TaskId id = TaskId.random();
        assertThatThrownBy(() -> store.submit(newTask(id, "big-key", "x".repeat(11), T0), received(id, "big-key", T0),
                null))
                .isInstanceOf(dev.sas.core.StateStoreException.class)
                .hasMessageContaining(id.value())
                .hasMessageContaining("big-key")
                .hasMessageContaining("too long")
                .hasRootCauseInstanceOf(java.sql.SQLException.class);
        assertThat(store.find(id)).isEmpty();

        TaskId small = TaskId.random();
        TaskId big = TaskId.random();
        assertThatThrownBy(() -> store.submitAll(
                List.of(newTask(small, "small", "ok", T0), newTask(big, "big", "y".repeat(20), T0)),
                List.of(received(small, "small", T0), received(big, "big", T0)), null))
                .isInstanceOf(dev.sas.core.StateStoreException.class)
                .hasMessageContaining(big.value())
                .hasMessageContaining("too long");
        assertThat(store.find(small)).as("the batch is one transaction").isEmpty();
    }

    @Test
    void the_store_sets_no_payload_limit_of_its_own() {
        TaskId id = TaskId.random();
        String input = "x".repeat(2 * 1024 * 1024);
        store.submit(newTask(id, "large", input, T0), received(id, "large", T0), null);
        assertThat(store.claim("a", 1, T0, Tasks.WF_V1).get(0).input()).isEqualTo(input);
    }

    @Test
    void submit_all_joins_a_host_connection_and_rolls_back_with_it() throws Exception {
        List<dev.sas.core.spi.NewTask> tasks = new ArrayList<>();
        List<TaskEvent> events = new ArrayList<>();
        for (int i = 0; i < 700; i++) {
            TaskId id = TaskId.random();
            tasks.add(newTask(id, "rb-" + i, "{}", T0));
            events.add(received(id, "rb-" + i, T0));
        }
        try (Connection c = DriverManager.getConnection(url)) {
            c.setAutoCommit(false);
            assertThat(store.submitAll(tasks, events, c)).allMatch(SubmitResult::created);
            c.rollback();
        }
        assertThat(store.countByStatus()).isEmpty();
        assertThat(store.events(tasks.get(0).taskId())).isEmpty();
    }

    @Test
    void submit_all_joins_a_jdbi_handle_and_commits_with_it() {
        TaskId a = TaskId.random();
        TaskId b = TaskId.random();
        try (Handle h = Jdbi.open(url)) {
            h.begin();
            List<SubmitResult> r = store.submitAll(List.of(newTask(a, "ha", "{}", T0), newTask(b, "hb", "{}", T0)),
                    List.of(received(a, "ha", T0), received(b, "hb", T0)), h);
            assertThat(r).containsExactly(new SubmitResult(a, true), new SubmitResult(b, true));
            h.commit();
        }
        assertThat(store.events(a)).hasSize(1);
        assertThat(store.events(b)).hasSize(1);
    }

    @Test
    void submit_all_on_a_host_connection_in_auto_commit_mode_commits_and_restores_the_mode() throws Exception {
        TaskId a = TaskId.random();
        TaskId dup = TaskId.random();
        TaskId first = submit("auto-dup");
        try (Connection c = DriverManager.getConnection(url)) {
            List<SubmitResult> r = store.submitAll(
                    List.of(newTask(a, "auto-a", "{}", T0), newTask(dup, "auto-dup", "{}", T0)),
                    List.of(received(a, "auto-a", T0), received(dup, "auto-dup", T0)), c);
            assertThat(r).containsExactly(new SubmitResult(a, true), new SubmitResult(first, false));
            assertThat(c.getAutoCommit()).isTrue();
        }
        assertThat(store.events(a)).hasSize(1);
        assertThat(store.events(first)).hasSize(1);
    }

    @Test
    void submit_all_with_duplicates_inside_a_host_transaction_leaves_the_transaction_usable() throws Exception {
        TaskId first = submit("dup-all");
        TaskId a = TaskId.random();
        TaskId b = TaskId.random();
        try (Connection c = DriverManager.getConnection(url)) {
            c.setAutoCommit(false);
            List<SubmitResult> r = store.submitAll(
                    List.of(newTask(a, "new-all", "{}", T0), newTask(b, "dup-all", "{}", T0)),
                    List.of(received(a, "new-all", T0), received(b, "dup-all", T0)), c);
            assertThat(r).containsExactly(new SubmitResult(a, true), new SubmitResult(first, false));
            try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT 1")) {
                assertThat(rs.next()).isTrue();
            }
            c.commit();
        }
        assertThat(store.find(a)).isPresent();
        assertThat(store.find(b)).isEmpty();
    }

    @Test
    void submit_all_with_an_unknown_transaction_type_names_the_type() {
        TaskId id = TaskId.random();
        assertThatThrownBy(() -> store.submitAll(List.of(newTask(id, "x", "{}", T0)), List.of(received(id, "x", T0)),
                        "tx"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("java.lang.String");
    }

    @Test
    void claim_skips_rows_locked_by_another_transaction() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(skipsLockedRows(), "H2 waits for row locks instead of skipping");
        TaskId locked = submit("locked");
        TaskId free = submit("free");
        try (Connection c = DriverManager.getConnection(url)) {
            c.setAutoCommit(false);
            try (Statement s = c.createStatement();
                    ResultSet rs = s.executeQuery("SELECT task_id FROM " + prefix + "task WHERE task_id = '"
                            + locked.value() + "' FOR UPDATE")) {
                assertThat(rs.next()).isTrue();
            }
            assertThat(store.claim("a", 10, T0, Tasks.WF_V1)).extracting(ClaimedTask::taskId).containsExactly(free);
            c.rollback();
        }
        assertThat(store.claim("b", 10, T0, Tasks.WF_V1)).extracting(ClaimedTask::taskId).containsExactly(locked);
    }

    @Test
    void a_recovery_does_not_wait_for_a_row_another_transaction_holds_and_the_others_in_its_batch_are_written()
            throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(skipsLockedRows(), "H2 waits for row locks instead of skipping");
        submit("held");
        submit("loose");
        List<ClaimedTask> claimed = store.claim("frozen", 2, T0, Tasks.WF_V1);
        ClaimedTask held = claimed.stream().filter(c -> c.businessKey().equals("held")).findFirst().orElseThrow();
        ClaimedTask loose = claimed.stream().filter(c -> c.businessKey().equals("loose")).findFirst().orElseThrow();
        Instant late = T0.plus(TIMEOUT).plusSeconds(1);
        List<WriteOutcome> outcomes;
        // the claimer froze in the middle of a write: its transaction holds the row
        try (Connection c = DriverManager.getConnection(url)) {
            c.setAutoCommit(false);
            try (Statement s = c.createStatement()) {
                assertThat(s.executeUpdate("UPDATE " + prefix + "task SET updated_at = updated_at WHERE task_id = '"
                        + held.taskId().value() + "'")).isEqualTo(1);
            }
            java.util.concurrent.CompletableFuture<List<WriteOutcome>> recovery = java.util.concurrent.CompletableFuture
                    .supplyAsync(() -> store.write(List.of(Tasks.expire(held, late), Tasks.expire(loose, late)), late));
            // while the row is still held: a recovery that waited for it would not have returned
            assertThat(recovery).succeedsWithin(java.time.Duration.ofSeconds(30));
            outcomes = recovery.join();
            c.rollback();
        }
        assertThat(outcomes).containsExactly(WriteOutcome.BUSY, WriteOutcome.APPLIED);
        assertThat(store.find(held.taskId()).orElseThrow().status()).isEqualTo(TaskStatus.PROCESSING);
        assertThat(store.find(loose.taskId()).orElseThrow().status()).isEqualTo(TaskStatus.PENDING);
        // once the row is free, the next pass recovers it
        assertThat(store.write(List.of(Tasks.expire(held, late)), late)).containsExactly(WriteOutcome.APPLIED);
        assertThat(store.find(held.taskId()).orElseThrow().status()).isEqualTo(TaskStatus.PENDING);
    }

    /** False where the internal switch {@code -Dsas.jdbc.events=plain} writes every event as its own row. */
    private static boolean packedEvents() {
        return !"plain".equalsIgnoreCase(System.getProperty("sas.jdbc.events", "packed").trim());
    }

    @Test
    void a_one_step_task_writes_one_event_row_and_reads_back_all_four_events() throws Exception {
        boolean packed = packedEvents();
        TaskId id = submit("lean");
        assertThat(eventRows(id)).as("RECEIVED is read from the task row (plain: a row)").isEqualTo(packed ? 0 : 1);
        assertThat(store.events(id)).singleElement().satisfies(e -> {
            assertThat(e.type()).isEqualTo(TaskEvent.Type.RECEIVED);
            assertThat(e.at()).isEqualTo(T0);
            assertThat(e.businessKey()).isEqualTo("lean");
        });
        ClaimedTask c = store.claim("a", 1, T0, Tasks.WF_V1).get(0);
        assertThat(eventRows(id)).as("the claim's STEP_STARTED is pending in the task row (plain: a row)")
                .isEqualTo(packed ? 0 : 2);
        assertThat(store.events(id)).extracting(TaskEvent::type).containsExactly(TaskEvent.Type.RECEIVED,
                TaskEvent.Type.STEP_STARTED);
        Instant done = T0.plusMillis(7);
        assertThat(store.write(List.of(Tasks.finish(c, done)), done)).containsExactly(WriteOutcome.APPLIED);

        assertThat(eventRows(id)).as("STEP_STARTED, STEP_COMPLETED and PROCESSED in one row (plain: a row each)")
                .isEqualTo(packed ? 1 : 4);
        List<TaskEvent> events = store.events(id);
        assertThat(events).extracting(TaskEvent::type).containsExactly(TaskEvent.Type.RECEIVED,
                TaskEvent.Type.STEP_STARTED, TaskEvent.Type.STEP_COMPLETED, TaskEvent.Type.PROCESSED);
        assertThat(events.get(1)).isEqualTo(new TaskEvent(id, "lean", "wf", TaskEvent.Type.STEP_STARTED, 0, "first",
                1, T0, null));
        assertThat(events.get(2)).isEqualTo(new TaskEvent(id, "lean", "wf", TaskEvent.Type.STEP_COMPLETED, 0, "first",
                1, done, null));
        assertThat(events.get(3)).isEqualTo(new TaskEvent(id, "lean", "wf", TaskEvent.Type.PROCESSED, -1, null, 0,
                done, null));
    }

    @Test
    void a_start_that_a_cancel_request_wrote_while_a_transition_waited_for_the_row_is_written_once() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(db() == TestDb.POSTGRES,
                "needs pg_locks to see the writer wait for the row");
        org.junit.jupiter.api.Assumptions.assumeTrue(packedEvents(), "sas.jdbc.events=plain: a claim leaves no start pending");
        TaskId id = submit("raced");
        TaskId other = submit("other");
        List<ClaimedTask> claimed = store.claim("a", 2, T0, Tasks.WF_V1);
        Instant asked = T0.plusMillis(3);
        Instant done = T0.plusMillis(7);
        java.util.concurrent.CompletableFuture<List<WriteOutcome>> write;
        try (Connection c = DriverManager.getConnection(url)) {
            c.setAutoCommit(false);
            try (Statement s = c.createStatement()) {
                s.executeQuery("SELECT task_id FROM " + prefix + "task WHERE task_id = '" + id.value() + "' FOR UPDATE")
                        .close();
                // the writer reads the pending starts, then its update waits for the row
                write = java.util.concurrent.CompletableFuture.supplyAsync(() -> store.write(
                        claimed.stream().map(x -> Tasks.finish(x, done)).toList(), done));
                org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30)).until(() -> {
                    try (Connection q = DriverManager.getConnection(url); Statement w = q.createStatement();
                            ResultSet rs = w.executeQuery("SELECT COUNT(*) FROM pg_locks l JOIN pg_stat_activity a"
                                    + " ON a.pid = l.pid WHERE NOT l.granted AND a.query LIKE '%" + prefix + "task%'")) {
                        rs.next();
                        return rs.getInt(1) > 0;
                    }
                });
                // meanwhile a cancel request writes the pending start before its own event and clears it
                s.executeUpdate("UPDATE " + prefix + "task SET cancel_requested = TRUE, pending_start_at = NULL"
                        + " WHERE task_id = '" + id.value() + "'");
                s.executeUpdate("INSERT INTO " + prefix + "event (task_id, type, step_index, step_name, attempt, at,"
                        + " before_type, before_step_index, before_step_name, before_attempt, before_at) VALUES ('"
                        + id.value() + "', 'CANCEL_REQUESTED', -1, NULL, 0, " + asked.toEpochMilli()
                        + ", 'STEP_STARTED', 0, 'first', 1, " + T0.toEpochMilli() + ")");
            }
            c.commit();
        }
        assertThat(write).succeedsWithin(java.time.Duration.ofSeconds(30));
        assertThat(write.join()).containsExactly(WriteOutcome.APPLIED, WriteOutcome.APPLIED);
        assertThat(store.events(id)).extracting(TaskEvent::type).containsExactly(TaskEvent.Type.RECEIVED,
                TaskEvent.Type.STEP_STARTED, TaskEvent.Type.CANCEL_REQUESTED, TaskEvent.Type.STEP_COMPLETED,
                TaskEvent.Type.PROCESSED);
        assertThat(store.events(other)).extracting(TaskEvent::type).containsExactly(TaskEvent.Type.RECEIVED,
                TaskEvent.Type.STEP_STARTED, TaskEvent.Type.STEP_COMPLETED, TaskEvent.Type.PROCESSED);
    }

    @Test
    void events_written_one_per_row_before_schema_8_read_back_unchanged() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(packedEvents(), "sas.jdbc.events=plain: the submit wrote RECEIVED as a row");
        TaskId id = submit("old");
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement()) {
            s.executeUpdate("INSERT INTO " + prefix + "event (task_id, type, step_index, step_name, attempt, at, message)"
                    + " VALUES ('" + id.value() + "', 'RECEIVED', -1, NULL, 0, " + T0.toEpochMilli() + ", NULL)");
            s.executeUpdate("INSERT INTO " + prefix + "event (task_id, type, step_index, step_name, attempt, at, message)"
                    + " VALUES ('" + id.value() + "', 'STEP_STARTED', 0, 'first', 1, " + (T0.toEpochMilli() + 1)
                    + ", NULL)");
        }
        assertThat(store.events(id)).extracting(TaskEvent::type)
                .containsExactly(TaskEvent.Type.RECEIVED, TaskEvent.Type.STEP_STARTED);
    }

    private long eventRows(TaskId id) throws Exception {
        try (Connection c = DriverManager.getConnection(url); Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM " + prefix + "event WHERE task_id = '"
                        + id.value() + "'")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    @Test
    void concurrent_claimers_never_get_the_same_task() throws Exception {
        int tasks = 3000;
        for (int i = 0; i < tasks; i++) {
            submit("c" + i);
        }
        int threads = 6;
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        Set<TaskId> seen = ConcurrentHashMap.newKeySet();
        AtomicInteger duplicates = new AtomicInteger();
        AtomicInteger total = new AtomicInteger();
        try {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                String me = "node-" + t;
                futures.add(pool.submit(() -> {
                    start.await();
                    int empty = 0;
                    while (empty < 3) {
                        List<ClaimedTask> got = store.claim(me, 50, T0, Tasks.WF_V1);
                        if (got.isEmpty()) {
                            empty++;
                            continue;
                        }
                        empty = 0;
                        List<dev.sas.core.spi.Transition> done = new ArrayList<>();
                        for (ClaimedTask c : got) {
                            total.incrementAndGet();
                            if (!seen.add(c.taskId())) {
                                duplicates.incrementAndGet();
                            }
                            done.add(Tasks.finish(c, T0));
                        }
                        assertThat(store.write(done, T0)).containsOnly(WriteOutcome.APPLIED);
                    }
                    return null;
                }));
            }
            start.countDown();
            for (Future<?> f : futures) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(duplicates).hasValue(0);
        assertThat(total).hasValue(tasks);
        assertThat(store.countByStatus()).containsEntry(TaskStatus.PROCESSED, (long) tasks);
    }

    @Test
    void timestamps_do_not_depend_on_the_jvm_time_zone() {
        TimeZone saved = TimeZone.getDefault();
        Instant at = Instant.parse("2031-03-30T01:30:00.123Z");
        TaskId id = TaskId.random();
        try {
            TimeZone.setDefault(TimeZone.getTimeZone("Pacific/Chatham"));
            store.submit(newTask(id, "tz", "{}", at), received(id, "tz", at), null);
            ClaimedTask c = store.claim("a", 1, at, Tasks.WF_V1).get(0);
            TimeZone.setDefault(TimeZone.getTimeZone("America/St_Johns"));
            TaskInfo info = store.find(id).orElseThrow();
            assertThat(info.createdAt()).isEqualTo(at);
            assertThat(info.nextAttemptAt()).isEqualTo(at);
            assertThat(info.completeBy()).isEqualTo(at.plus(TIMEOUT)).isEqualTo(c.completeBy());
            assertThat(store.events(id).get(0).at()).isEqualTo(at);
            assertThat(store.findExpired(at.plus(TIMEOUT).plusMillis(1), 10)).hasSize(1);
            assertThat(store.findExpired(at.plus(TIMEOUT), 10)).isEmpty();
        } finally {
            TimeZone.setDefault(saved);
        }
    }

    @Test
    void stale_write_after_a_reclaim_is_rejected() {
        TaskId id = submit("stale");
        ClaimedTask first = store.claim("a", 1, T0, Tasks.WF_V1).get(0);
        Instant late = T0.plus(TIMEOUT).plusSeconds(1);
        assertThat(store.write(List.of(Tasks.expire(first, late)), late)).containsExactly(WriteOutcome.APPLIED);
        ClaimedTask second = store.claim("b", 1, late, Tasks.WF_V1).get(0);
        assertThat(second.lease()).isGreaterThan(first.lease());

        assertThat(store.write(List.of(Tasks.finish(first, late)), late)).containsExactly(WriteOutcome.STALE);
        assertThat(store.find(id).orElseThrow().steps()).isEmpty();
        assertThat(store.events(id)).extracting(TaskEvent::type).doesNotContain(TaskEvent.Type.PROCESSED);
        assertThat(store.write(List.of(Tasks.finish(second, late)), late)).containsExactly(WriteOutcome.APPLIED);
        assertThat(store.find(id).orElseThrow().status()).isEqualTo(TaskStatus.PROCESSED);
    }

    @Test
    void one_stale_transition_does_not_block_the_others_in_its_batch() {
        submit("b1");
        submit("b2");
        List<ClaimedTask> claimed = store.claim("a", 2, T0, Tasks.WF_V1);
        ClaimedTask wrongLease = new ClaimedTask(claimed.get(0).taskId(), "wf", 1, "b1", TaskStatus.PROCESSING,
                claimed.get(0).lease() + 7, 0, 1, 0, claimed.get(0).completeBy(), false, "", null, T0, List.of());
        assertThat(store.write(List.of(Tasks.finish(wrongLease, T0), Tasks.finish(claimed.get(1), T0)), T0))
                .containsExactly(WriteOutcome.STALE, WriteOutcome.APPLIED);
    }

    @Test
    void a_value_the_database_refuses_fails_only_its_own_transition_and_the_rest_of_the_batch_commits() {
        for (int i = 0; i < 5; i++) {
            submit("d" + i);
        }
        List<ClaimedTask> claimed = store.claim("a", 5, T0, Tasks.WF_V1);
        ClaimedTask bad = claimed.get(2);
        int badEvents = store.events(bad.taskId()).size();
        // A step name longer than its VARCHAR(200) column: storable text, but the database refuses it.
        Transition tooLong = Transition.holder(bad).at(0, "first", TIMEOUT).attempt(1)
                .recording(StepUpdate.completed(0, "s".repeat(300), 1, "out", T0, T0)).end(TaskStatus.PROCESSED);
        List<Transition> batch = new ArrayList<>();
        for (ClaimedTask c : claimed) {
            batch.add(c == bad ? tooLong : Tasks.finish(c, T0));
        }

        List<WriteOutcome> outcomes = store.write(batch, T0);

        assertThat(outcomes).hasSize(5);
        for (int i = 0; i < 5; i++) {
            if (i == 2) {
                assertThat(outcomes.get(i).kind()).isEqualTo(WriteOutcome.Kind.REFUSED);
                assertThat(outcomes.get(i).reason()).contains("SQLState 22001");
            } else {
                assertThat(outcomes.get(i)).isEqualTo(WriteOutcome.APPLIED);
                assertThat(store.find(claimed.get(i).taskId()).orElseThrow().status()).isEqualTo(TaskStatus.PROCESSED);
            }
        }
        TaskInfo untouched = store.find(bad.taskId()).orElseThrow();
        assertThat(untouched.status()).isEqualTo(TaskStatus.PROCESSING);
        assertThat(untouched.steps()).isEmpty();
        assertThat(store.events(bad.taskId())).hasSize(badEvents);
        // The whole batch replayed (its acknowledgement lost): the written ones are recognised, nothing doubles.
        List<WriteOutcome> replayed = store.write(batch, T0);
        assertThat(replayed).filteredOn(o -> o.kind() == WriteOutcome.Kind.APPLIED_ALREADY).hasSize(4);
        assertThat(replayed.get(2).kind()).isEqualTo(WriteOutcome.Kind.REFUSED);
        assertThat(store.events(claimed.get(0).taskId())).extracting(TaskEvent::type)
                .containsOnlyOnce(TaskEvent.Type.PROCESSED);
    }

    @Test
    void schema_applied_twice_and_by_racing_instances_is_idempotent() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(3);
        String fresh = TestDb.randomPrefix();
        try {
            CountDownLatch start = new CountDownLatch(1);
            List<Future<JdbcStateStore>> futures = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                futures.add(pool.submit(() -> {
                    start.await();
                    return TestDb.builder(url, fresh).maxPoolSize(2).build();
                }));
            }
            start.countDown();
            for (Future<JdbcStateStore> f : futures) {
                JdbcStateStore s = f.get(60, TimeUnit.SECONDS);
                assertThat(s.tryAcquireSupervisorLease("x", T0, TIMEOUT)).isTrue();
                s.close();
            }
            JdbcStateStore again = TestDb.builder(url, fresh).maxPoolSize(2).build();
            again.close();
        } finally {
            pool.shutdownNow();
            db().drop(url, fresh);
        }
    }

    @Test
    void close_leaves_a_host_data_source_open() throws Exception {
        com.zaxxer.hikari.HikariDataSource host = new com.zaxxer.hikari.HikariDataSource();
        host.setJdbcUrl(url);
        host.setMaximumPoolSize(2);
        try {
            JdbcStateStore s = JdbcStateStore.builder().dataSource(host).tablePrefix(prefix).build();
            s.close();
            s.close();
            assertThat(host.isClosed()).isFalse();
            try (Connection c = host.getConnection()) {
                assertThat(c.isValid(1)).isTrue();
            }
        } finally {
            host.close();
        }
    }
}
