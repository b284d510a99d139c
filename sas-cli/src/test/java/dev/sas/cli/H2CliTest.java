package dev.sas.cli;

/** The command line against an in-memory H2 database (shared by name within this JVM). */
class H2CliTest extends CliContract {

    @Override
    String url() {
        return "jdbc:h2:mem:sas-cli-" + letters(8) + ";DB_CLOSE_DELAY=-1";
    }

    @Override
    void drop(String url, String prefix) {
        // the in-memory database goes with the JVM
    }
}
