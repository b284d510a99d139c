package dev.sas.jdbc.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.sas.core.StateStoreException;
import dev.sas.core.StoreUnavailableException;
import java.sql.BatchUpdateException;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Which database errors the store reports as {@link StoreUnavailableException}, retried by the runtime. */
class StoreErrorsTest {

    @ParameterizedTest
    @ValueSource(strings = {"08006", "08001", "08003", "57P01", "57P02", "57P03", "25006", "40001", "40P01", "53300",
        "57014", "55P03"})
    void connection_failover_read_only_and_contention_states_pass_by_themselves(String state) {
        assertThat(StoreErrors.isTransient(new SQLException("x", state))).isTrue();
    }

    @ParameterizedTest
    @ValueSource(strings = {"22001", "22021", "23505", "42P01", "42601", "XX000"})
    void value_constraint_and_sql_errors_do_not(String state) {
        assertThat(StoreErrors.isTransient(new SQLException("x", state))).isFalse();
    }

    @Test
    void mariadb_read_only_and_lock_wait_codes_behind_hy000_pass() {
        assertThat(StoreErrors.isTransient(new SQLException("read-only", "HY000", 1290))).isTrue();
        assertThat(StoreErrors.isReadOnly(new SQLException("read-only", "HY000", 1290))).isTrue();
        assertThat(StoreErrors.isTransient(new SQLException("lock wait", "HY000", 1205))).isTrue();
        assertThat(StoreErrors.isTransient(new SQLException("other", "HY000", 1064))).isFalse();
    }

    @Test
    void a_pool_time_out_passes_and_a_data_error_inside_a_batch_does_not() {
        assertThat(StoreErrors.isTransient(new SQLTransientConnectionException("pool - request timed out"))).isTrue();
        BatchUpdateException batch = new BatchUpdateException("batch", "22021", 0, new int[0], null);
        batch.setNextException(new SQLException("invalid byte sequence", "22021"));
        assertThat(StoreErrors.isTransient(batch)).isFalse();
    }

    @Test
    void the_read_only_state_is_found_behind_a_batch_and_jdbi_wrapping() {
        BatchUpdateException batch = new BatchUpdateException("batch entry 0", "25006", 0, new int[0], null);
        Exception wrapped = new StateStoreException("write failed", new RuntimeException(batch));
        assertThat(StoreErrors.isReadOnly(wrapped)).isTrue();
        assertThat(StoreErrors.isTransient(wrapped)).isTrue();
    }

    @Test
    void the_store_context_turns_a_transient_failure_into_store_unavailable_and_tells_the_pool_about_read_only() {
        int[] readOnlyCalls = {0};
        StoreContext db = new StoreContext(Jdbi.create("jdbc:h2:mem:x"), Dialects.detect("H2"), new Tables("t_"),
                () -> readOnlyCalls[0]++);

        StateStoreException lost = db.failed("claim", null, new RuntimeException(new SQLException("I/O error", "08006")));
        StateStoreException demoted = db.failed("write", "t1", new RuntimeException(
                new SQLException("cannot execute UPDATE in a read-only transaction", "25006")));
        StateStoreException data = db.failed("write", "t1", new RuntimeException(new SQLException("too long", "22001")));

        assertThat(lost).isInstanceOf(StoreUnavailableException.class).hasMessageContaining("claim failed");
        assertThat(demoted).isInstanceOf(StoreUnavailableException.class).hasMessageContaining("for task t1");
        assertThat(data).isNotInstanceOf(StoreUnavailableException.class);
        assertThat(readOnlyCalls[0]).isEqualTo(1);
    }
}
