package dev.sas.cli;

import dev.sas.core.SasClient;
import dev.sas.core.StateStoreException;
import dev.sas.jdbc.JdbcStateStore;
import java.time.Duration;
import picocli.CommandLine;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** Where the tasks are: the JDBC URL and its credentials, shared by every command. */
final class StoreOptions {

    @Option(names = "--url", paramLabel = "JDBC_URL", defaultValue = "${env:SAS_JDBC_URL}", required = true,
            description = "JDBC URL of the SAS database (default: $SAS_JDBC_URL), e.g."
                    + " jdbc:postgresql://127.0.0.1:5432/app?user=ops")
    String url;

    @Option(names = "--user", paramLabel = "NAME", description = "database user, if not in the URL")
    String user;

    @Option(names = "--password", paramLabel = "PASSWORD", arity = "0..1", interactive = true,
            defaultValue = "${env:SAS_JDBC_PASSWORD}",
            description = "database password; without a value it is asked for (default: $SAS_JDBC_PASSWORD)")
    String password;

    @Option(names = "--table-prefix", paramLabel = "PREFIX", defaultValue = JdbcStateStore.DEFAULT_TABLE_PREFIX,
            description = "prefix of the SAS tables (default: ${DEFAULT-VALUE})")
    String tablePrefix;

    @Option(names = "--json", description = "print JSON instead of tables (errors too)")
    boolean json;

    @Spec(Spec.Target.MIXEE)
    CommandSpec mixee;

    /** The store could not be opened. */
    static final class CannotOpen extends RuntimeException {
        private static final long serialVersionUID = 1L;

        CannotOpen(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /**
     * Opens the store without touching its schema (a command never creates or upgrades tables) and
     * a client on it.
     *
     * @throws CannotOpen if the database cannot be reached
     * @throws CommandLine.ParameterException if the URL or table prefix is malformed
     */
    Session open() {
        JdbcStateStore.Builder b;
        try {
            b = JdbcStateStore.builder().url(url).tablePrefix(tablePrefix);
        } catch (IllegalArgumentException e) {
            // a malformed URL or prefix is a usage error (exit 2), not a database failure
            throw new CommandLine.ParameterException(mixee.commandLine(), e.getMessage());
        }
        b.createSchema(false)
                .maxPoolSize(2).poolName("sas-cli").connectTimeout(Duration.ofSeconds(10));
        if (user != null) {
            b.username(user);
        }
        if (password != null && !password.isEmpty()) {
            b.password(password);
        }
        JdbcStateStore store;
        try {
            store = b.build();
        } catch (StateStoreException | IllegalStateException | IllegalArgumentException e) {
            throw new CannotOpen("cannot open the SAS database: " + e.getMessage(), e);
        }
        return new Session(store, SasClient.builder().stateStore(store).build());
    }

    /**
     * An open store and a client on it.
     *
     * @param store the store, closed with the session
     * @param client a client on it
     */
    record Session(JdbcStateStore store, SasClient client) implements AutoCloseable {
        @Override
        public void close() {
            store.close();
        }
    }
}
