package dev.sas.jdbc.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.SQLException;
import java.sql.SQLTransactionRollbackException;
import org.junit.jupiter.api.Test;

/** Which failures make a claim transaction run again (it was rolled back, so nothing is lost). */
class JdbcStoreDeadlockTest {

    @Test
    void deadlock_victims_and_serialization_failures_are_recognised_through_wrappers() {
        // MariaDB/MySQL ER_LOCK_DEADLOCK and SQL-standard serialization failure
        assertThat(JdbcStore.isDeadlock(new RuntimeException(new SQLTransactionRollbackException(
                "Deadlock found when trying to get lock", "40001", 1213)))).isTrue();
        // PostgreSQL deadlock_detected
        assertThat(JdbcStore.isDeadlock(new IllegalStateException(new SQLException("deadlock detected", "40P01"))))
                .isTrue();
    }

    @Test
    void other_failures_are_not_retried() {
        assertThat(JdbcStore.isDeadlock(new RuntimeException(new SQLException("duplicate key", "23505")))).isFalse();
        assertThat(JdbcStore.isDeadlock(new SQLException("lock wait timeout", "HY000", 1205))).isFalse();
        assertThat(JdbcStore.isDeadlock(new RuntimeException("no SQL cause"))).isFalse();
    }
}
