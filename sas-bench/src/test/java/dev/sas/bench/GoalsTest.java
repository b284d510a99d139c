package dev.sas.bench;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.SQLException;
import java.sql.SQLTransactionRollbackException;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The issue-12 target table and the raw ceiling's SQL, from made-up medians: no database, no timing. */
class GoalsTest {

    private final Bench.Options o = Bench.parse(new String[] {"--db", "h2,postgres", "--no-docs"});
    private final Bench.Report r = new Bench.Report();

    private String cell(String labelStart, String db) {
        return Goals.all(o, r).stream().filter(g -> g.label().startsWith(labelStart)).findFirst().orElseThrow()
                .cell().apply(o, db);
    }

    @Test
    void submitAll_end_to_end_is_compared_with_the_better_db_scheduler_strategy() {
        String m = EndToEnd.tasksPerSecond(o, EndToEnd.Mode.BATCH);
        r.add("postgres", m, Bench.SAS, 4_000);
        r.add("postgres", m, Bench.DBS_FETCH, 1_500);
        r.add("postgres", m, Bench.DBS_LOCK, 2_500);
        assertThat(cell("SAS submitAll end to end", "postgres")).isEqualTo("1.60× **MISSED**");
        r.add("h2", m, Bench.SAS, 2_000);
        r.add("h2", m, Bench.DBS_FETCH, 1_000); // lock-and-fetch does not run on H2
        assertThat(cell("SAS submitAll end to end", "h2")).isEqualTo("2.00× met");
    }

    @Test
    void sixteen_threads_against_one_is_judged_on_postgres_and_mariadb_only() {
        for (String db : List.of("h2", "postgres")) {
            r.add(db, EndToEnd.tasksPerSecond(o, EndToEnd.Mode.SINGLE_ONE_THREAD), Bench.SAS, 1_000);
            r.add(db, EndToEnd.tasksPerSecond(o, EndToEnd.Mode.SINGLE_MANY_THREADS), Bench.SAS, 2_500);
        }
        assertThat(cell("SAS 16 threads", "postgres")).isEqualTo("2.50× **MISSED**");
        assertThat(cell("SAS 16 threads", "h2")).isEqualTo("2.50×");
    }

    @Test
    void submitAll_is_compared_with_the_raw_multi_row_insert_on_the_largest_backlog() {
        r.add("postgres", EndToEnd.batchEnqueue(5_000), Bench.SAS, 100); // the smaller backlog is not the one compared
        r.add("postgres", EndToEnd.batchEnqueue(100_000), Bench.SAS, 8_500);
        r.add("postgres", EndToEnd.batchEnqueue(100_000), Bench.RAW, 10_000);
        assertThat(cell("SAS submitAll ÷ raw", "postgres")).isEqualTo("0.85× met");
    }

    @Test
    void drain_growth_idle_latency_and_missing_figures() {
        r.add("postgres", EndToEnd.dueGrowth(o.dueSizes), Bench.SAS, 1.6);
        r.add("postgres", Bench.IDLE_P50, Bench.SAS, 1.0);
        r.add("postgres", Bench.IDLE_P50, Bench.DBS_FETCH, 2.0);
        r.add("postgres", Bench.IDLE_P50, Bench.DBS_LOCK, 0.8);
        assertThat(cell("SAS drain per task", "postgres")).isEqualTo("1.60× **MISSED**");
        assertThat(cell("SAS idle submit→start p50", "postgres")).isEqualTo("1.25× **MISSED**");
        assertThat(cell("SAS submitAll end to end", "postgres")).isEqualTo("n/a");
        assertThat(cell("SAS 3-step commits/step", "postgres")).isEqualTo("n/a");

        StringBuilder sb = new StringBuilder();
        Goals.table(o, r, sb);
        assertThat(sb.toString()).contains("| target | postgres |").contains("| SAS drain per task, largest ÷ smallest"
                + " backlog (≤ 1.5×) | 1.60× **MISSED** |");
    }

    @Test
    void raw_insert_is_one_multi_row_statement() {
        assertThat(RawJdbcSystem.insertSql("t (a) values ", "(?)", 3)).isEqualTo("insert into t (a) values (?), (?), (?)");
        assertThat(RawJdbcSystem.insertSql("t (a) values ", "(?)", 1)).isEqualTo("insert into t (a) values (?)");
    }

    @Test
    void raw_loop_retries_only_transactions_the_database_rolled_back() {
        assertThat(RawJdbcSystem.retryable(new SQLTransactionRollbackException("deadlock", "40001"))).isTrue();
        assertThat(RawJdbcSystem.retryable(new SQLException("wrapped", "HY000", new SQLException("deadlock", "40P01"))))
                .isTrue();
        assertThat(RawJdbcSystem.retryable(new SQLException("duplicate key", "23505"))).isFalse();
        assertThat(RawJdbcSystem.retryable(new SQLException("no state"))).isFalse();
    }
}
