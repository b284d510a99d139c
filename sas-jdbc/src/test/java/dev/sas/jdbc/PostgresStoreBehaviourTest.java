package dev.sas.jdbc;

/** Store behaviour on POSTGRES. */
class PostgresStoreBehaviourTest extends JdbcStoreBehaviourTest {

    @Override
    TestDb db() {
        return TestDb.POSTGRES;
    }
}
