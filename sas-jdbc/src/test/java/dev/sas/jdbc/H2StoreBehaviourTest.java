package dev.sas.jdbc;

/** Store behaviour on H2_MEMORY. */
class H2StoreBehaviourTest extends JdbcStoreBehaviourTest {

    @Override
    TestDb db() {
        return TestDb.H2_MEMORY;
    }

    @Override
    boolean skipsLockedRows() {
        return false;
    }
}
