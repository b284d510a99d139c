package dev.sas.jdbc;

/** Store behaviour on MARIADB. */
class MariaDbStoreBehaviourTest extends JdbcStoreBehaviourTest {

    @Override
    TestDb db() {
        return TestDb.MARIADB;
    }
}
