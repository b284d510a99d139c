package dev.sas.jdbc;

import dev.sas.core.StateStoreException;
import dev.sas.core.spi.StateStore;
import dev.sas.jdbc.internal.ClassPath;
import dev.sas.jdbc.internal.Dialect;
import dev.sas.jdbc.internal.HandedInDataSources;
import dev.sas.jdbc.internal.JdbcStore;
import dev.sas.jdbc.internal.OwnedPool;
import dev.sas.jdbc.internal.Pools;
import dev.sas.jdbc.internal.SchemaManager;
import dev.sas.jdbc.internal.Tables;
import dev.sas.jdbc.internal.Timeouts;
import dev.sas.jdbc.internal.Urls;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import javax.sql.DataSource;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.core.JdbiException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A durable {@link StateStore} in a JDBC database: PostgreSQL, MariaDB/MySQL or H2, detected from
 * the connection. Every instant is stored as UTC epoch milliseconds,
 * so neither the JVM's nor the server's time zone matters.
 *
 * <pre>{@code
 * StateStore store = JdbcStateStore.builder()
 *         .url("jdbc:postgresql://db:5432/app")
 *         .username("app").password(secret)
 *         .build();
 * }</pre>
 *
 * <p>The store needs the JDBC driver of its database and, when it builds its own pool from
 * {@link Builder#url}, HikariCP ({@code com.zaxxer:HikariCP}); both are optional dependencies of
 * this module, so the application declares the ones it uses. {@link Builder#build()} names a
 * missing one.
 *
 * <p>Thread-safe. {@link #close()} closes the connection pool if this store created it (from
 * {@link Builder#url}), never a data source the host passed in.
 */
public final class JdbcStateStore extends JdbcStore {

    /** Table prefix when none is set. */
    public static final String DEFAULT_TABLE_PREFIX = "sas_";
    /** Pool size when the store creates its own pool and none is set. */
    public static final int DEFAULT_MAX_POOL_SIZE = 10;
    /**
     * How long a pool we create waits for a connection before the operation fails: 2 s. HikariCP
     * also waits up to this long between its attempts to reconnect while the database is away, so
     * it bounds how late the pool notices a restarted database or a new primary after a failover.
     */
    public static final Duration CONNECTION_TIMEOUT = Duration.ofSeconds(2);
    /** How long opening a connection to PostgreSQL or MariaDB may take when none is set: 10 s. */
    public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(10);
    /**
     * How long a read on an open connection may block when none is set: 60 s. This is what ends
     * a half-open connection (a peer that vanished without closing it); it must exceed the
     * statement time-out, or a slow but healthy statement would lose its connection.
     */
    public static final Duration DEFAULT_SOCKET_TIMEOUT = Duration.ofSeconds(60);
    /** How long the server lets one statement run when none is set: 30 s. */
    public static final Duration DEFAULT_STATEMENT_TIMEOUT = Duration.ofSeconds(30);
    /**
     * How long the server lets a session of the store's pool sit idle inside a transaction when
     * none is set: 5 s. The store's own transactions never pause between statements, so such a
     * session belongs to a node frozen or cut off in the middle of a write.
     */
    public static final Duration DEFAULT_IDLE_IN_TRANSACTION_TIMEOUT = Duration.ofSeconds(5);
    /** Settings appended to the URL of an {@linkplain Builder#embeddedH2 embedded H2} database. */
    public static final String EMBEDDED_H2_SETTINGS = ";LOCK_TIMEOUT=10000";

    private static final Logger log = LoggerFactory.getLogger(JdbcStateStore.class);
    private static final AtomicInteger POOLS = new AtomicInteger();

    private final OwnedPool ownedPool;
    private final String description;
    private final Supplier<?> hostTransaction;
    private final AtomicBoolean closed = new AtomicBoolean();

    private JdbcStateStore(Jdbi jdbi, Dialect dialect, Tables tables, Runnable onReadOnly, OwnedPool ownedPool,
            String description, Supplier<?> hostTransaction) {
        super(jdbi, dialect, tables, onReadOnly);
        this.ownedPool = ownedPool;
        this.description = description;
        this.hostTransaction = hostTransaction;
    }

    /** A new builder. The builder is not thread-safe; the stores it builds are. */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * {@inheritDoc}
     *
     * <p>What the {@link Builder#hostTransaction} supplier returns, or null without one.
     *
     * @throws IllegalArgumentException if the supplier returns something other than a
     *     {@link java.sql.Connection}, a Jdbi {@link org.jdbi.v3.core.Handle} or null
     */
    @Override
    public Object hostTransaction() {
        Object t = hostTransaction == null ? null : hostTransaction.get();
        if (t != null && !(t instanceof java.sql.Connection) && !(t instanceof org.jdbi.v3.core.Handle)) {
            throw new IllegalArgumentException("the hostTransaction supplier returned a " + t.getClass().getName()
                    + "; it must return a java.sql.Connection, an org.jdbi.v3.core.Handle, or null");
        }
        return t;
    }

    /** Stops listening for hints, and closes the connection pool if this store created it. Idempotent; never throws. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            super.close();
            if (ownedPool != null) {
                try {
                    ownedPool.close();
                } catch (RuntimeException e) {
                    log.warn("closing the SAS store's pool failed: {}", e.toString());
                }
            }
        }
    }

    /** Which database and tables this store uses (no credentials). */
    @Override
    public String toString() {
        return "JdbcStateStore[" + description + "]";
    }

    /**
     * Configures and builds a {@link JdbcStateStore}. Set exactly one of {@link #dataSource} (the
     * application's pool), {@link #url} (a pool the store builds) or {@link #embeddedH2} (a local
     * file for one node). There is no default database: a node that shares no database with the
     * others would run alone without anyone noticing. Not thread-safe.
     */
    public static final class Builder {

        private DataSource dataSource;
        private String url;
        private Path embeddedH2;
        private String username;
        private String password;
        private Integer maxPoolSize;
        private String poolName;
        private String tablePrefix = DEFAULT_TABLE_PREFIX;
        private boolean createSchema = true;
        private Supplier<?> hostTransaction;
        private Duration connectTimeout;
        private Duration socketTimeout;
        private Duration statementTimeout;
        private Duration idleInTransactionTimeout;

        private Builder() {
        }

        /**
         * Uses the host's data source. The store never closes it, and its own settings apply:
         * configure connect, socket and statement time-outs there (without a socket time-out a
         * half-open connection stalls the runtime's threads for as long as TCP allows).
         *
         * @throws NullPointerException if {@code dataSource} is null
         */
        public Builder dataSource(DataSource dataSource) {
            this.dataSource = Objects.requireNonNull(dataSource, "dataSource must not be null");
            return this;
        }

        /**
         * Connects to this JDBC URL through a HikariCP pool that the store creates and closes.
         * Needs HikariCP ({@code com.zaxxer:HikariCP}) and the database's JDBC driver on the
         * class path.
         *
         * @throws NullPointerException if {@code url} is null
         * @throws IllegalArgumentException if {@code url} does not start with {@code jdbc:}
         */
        public Builder url(String url) {
            Objects.requireNonNull(url, "url must not be null");
            if (!url.startsWith("jdbc:")) {
                throw new IllegalArgumentException("url must start with 'jdbc:', was '" + Urls.redact(url) + "'");
            }
            this.url = url;
            return this;
        }

        /**
         * Keeps the state in an embedded H2 database in {@code file} (H2 adds {@code .mv.db}),
         * through a pool the store creates and closes. For one node, a demo or a test: no other
         * process shares the file, so there is no takeover between nodes. Needs H2
         * ({@code com.h2database:h2}) and HikariCP on the class path.
         *
         * @throws NullPointerException if {@code file} is null
         */
        public Builder embeddedH2(Path file) {
            this.embeddedH2 = Objects.requireNonNull(file, "file must not be null");
            return this;
        }

        /**
         * User for {@link #url}.
         *
         * @throws NullPointerException if {@code username} is null
         */
        public Builder username(String username) {
            this.username = Objects.requireNonNull(username, "username must not be null");
            return this;
        }

        /**
         * Password for {@link #url}. Never logged.
         *
         * @throws NullPointerException if {@code password} is null
         */
        public Builder password(String password) {
            this.password = Objects.requireNonNull(password, "password must not be null");
            return this;
        }

        /**
         * Maximum connections of the pool created for {@link #url}; default {@value JdbcStateStore#DEFAULT_MAX_POOL_SIZE}.
         *
         * @throws IllegalArgumentException if {@code maxPoolSize} is not positive
         */
        public Builder maxPoolSize(int maxPoolSize) {
            if (maxPoolSize <= 0) {
                throw new IllegalArgumentException("maxPoolSize must be positive, was " + maxPoolSize);
            }
            this.maxPoolSize = maxPoolSize;
            return this;
        }

        /**
         * Name of the pool created for {@link #url}; on PostgreSQL also the connections'
         * {@code application_name}, unless the URL sets one. Default {@code sas-<n>}.
         *
         * @throws NullPointerException if {@code poolName} is null
         * @throws IllegalArgumentException if {@code poolName} is blank
         */
        public Builder poolName(String poolName) {
            Objects.requireNonNull(poolName, "poolName must not be null");
            if (poolName.isBlank()) {
                throw new IllegalArgumentException("poolName must not be blank");
            }
            this.poolName = poolName;
            return this;
        }

        /**
         * Prefix of every table name; default {@value JdbcStateStore#DEFAULT_TABLE_PREFIX}. Letters,
         * digits and underscores, starting with a letter, at most 21 characters.
         *
         * @throws NullPointerException if {@code tablePrefix} is null
         * @throws IllegalArgumentException if it has any other form
         */
        public Builder tablePrefix(String tablePrefix) {
            Objects.requireNonNull(tablePrefix, "tablePrefix must not be null");
            new Tables(tablePrefix);
            this.tablePrefix = tablePrefix;
            return this;
        }

        /**
         * How long opening a connection of the pool created for {@link #url} may take; default
         * {@link JdbcStateStore#DEFAULT_CONNECT_TIMEOUT}. PostgreSQL takes whole seconds (rounded
         * up); embedded H2 has no network. A {@code connectTimeout} in the URL wins. With a
         * {@link #dataSource}, the host's pool settings apply instead.
         *
         * @throws NullPointerException if {@code connectTimeout} is null
         * @throws IllegalArgumentException if it is not positive
         */
        public Builder connectTimeout(Duration connectTimeout) {
            this.connectTimeout = positive(connectTimeout, "connectTimeout");
            return this;
        }

        /**
         * How long a read on a connection of the pool created for {@link #url} may block before
         * the connection is dropped as dead; default {@link JdbcStateStore#DEFAULT_SOCKET_TIMEOUT}.
         * Without it a half-open connection stalls the claim, recorder and supervisor threads for
         * as long as TCP allows. Must exceed {@link #statementTimeout}. PostgreSQL takes whole
         * seconds (rounded up). A {@code socketTimeout} in the URL wins. With a {@link #dataSource},
         * the host's pool settings apply instead.
         *
         * @throws NullPointerException if {@code socketTimeout} is null
         * @throws IllegalArgumentException if it is not positive
         */
        public Builder socketTimeout(Duration socketTimeout) {
            this.socketTimeout = positive(socketTimeout, "socketTimeout");
            return this;
        }

        /**
         * How long the server lets one statement of the pool created for {@link #url} run;
         * default {@link JdbcStateStore#DEFAULT_STATEMENT_TIMEOUT}. Set per connection
         * ({@code statement_timeout} on PostgreSQL, {@code max_statement_time} on MariaDB; not on
         * H2, where H2's {@code QUERY_TIMEOUT} turns lock waits into deadlock
         * errors). With a {@link #dataSource}, the host's settings apply instead.
         *
         * @throws NullPointerException if {@code statementTimeout} is null
         * @throws IllegalArgumentException if it is not positive
         */
        public Builder statementTimeout(Duration statementTimeout) {
            this.statementTimeout = positive(statementTimeout, "statementTimeout");
            return this;
        }

        /**
         * How long the server lets a session of the pool created for {@link #url} sit idle inside a
         * transaction before it ends the session and rolls the transaction back; default
         * {@link JdbcStateStore#DEFAULT_IDLE_IN_TRANSACTION_TIMEOUT}
         * ({@code idle_in_transaction_session_timeout} on PostgreSQL, {@code idle_transaction_timeout}
         * on MariaDB, in whole seconds rounded up; not on H2). The store's transactions never pause
         * between statements, so such a session belongs to a node frozen (a long GC pause, a stopped
         * process), cut off or half-open in the middle of a write: the rows it holds are freed after
         * this long, and the supervisor recovers those tasks instead of waiting for that node. Keep it
         * below the steps' {@code completeWithin}. With a {@link #dataSource}, the host's settings
         * apply instead.
         *
         * @throws NullPointerException if {@code idleInTransactionTimeout} is null
         * @throws IllegalArgumentException if it is not positive
         */
        public Builder idleInTransactionTimeout(Duration idleInTransactionTimeout) {
            this.idleInTransactionTimeout = positive(idleInTransactionTimeout, "idleInTransactionTimeout");
            return this;
        }

        private static Duration positive(Duration d, String name) {
            Objects.requireNonNull(d, name + " must not be null");
            if (d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException(name + " must be positive, was " + d);
            }
            return d;
        }

        /**
         * How to find the host transaction the submitting thread is in, which a submission that
         * names none then joins: a supplier called on that thread that returns the transaction's
         * {@link java.sql.Connection} (or a Jdbi {@code Handle}), or null when the thread is in
         * none. The connection must come from the same database as the store's. The Spring Boot
         * starter sets it to the connection of the current Spring transaction on the
         * application's data source.
         *
         * @throws NullPointerException if {@code hostTransaction} is null
         */
        public Builder hostTransaction(Supplier<?> hostTransaction) {
            this.hostTransaction = Objects.requireNonNull(hostTransaction, "hostTransaction must not be null");
            return this;
        }

        /**
         * Whether {@link #build()} creates and upgrades the tables (default true). Turn it off
         * when Flyway or Liquibase applies the scripts shipped in this jar (docs/jdbc.md): then
         * {@code build()} only checks that their tables and columns are there, and throws an
         * {@code IllegalStateException} naming the script to apply if one is missing.
         */
        public Builder createSchema(boolean createSchema) {
            this.createSchema = createSchema;
            return this;
        }

        /**
         * Connects, detects the database, applies the schema if {@link #createSchema} is on, and
         * returns the store.
         *
         * @throws IllegalStateException if no database is set, settings contradict each other (e.g.
         *     both a data source and a URL), a library the settings need is not on the class path
         *     (the message names it), or the database is not H2, PostgreSQL or MariaDB/MySQL
         * @throws StateStoreException if the database cannot be reached or refuses the schema;
         *     the message names the URL without its password
         */
        public JdbcStateStore build() {
            int databases = (dataSource != null ? 1 : 0) + (url != null ? 1 : 0) + (embeddedH2 != null ? 1 : 0);
            if (databases == 0) {
                throw new IllegalStateException("no database: set dataSource(...) to use your application's pool,"
                        + " url(...) for a pool the store builds, or embeddedH2(file) for a local H2 file (one node"
                        + " only: no other node shares it)");
            }
            if (databases > 1) {
                throw new IllegalStateException("more than one of dataSource, url and embeddedH2 is set; set only one"
                        + " of them");
            }
            if (dataSource != null && (username != null || password != null || maxPoolSize != null || poolName != null
                    || connectTimeout != null || socketTimeout != null || statementTimeout != null
                    || idleInTransactionTimeout != null)) {
                throw new IllegalStateException("dataSource is set together with username, password, maxPoolSize,"
                        + " poolName or a time-out; those configure the pool built from url. Configure your own data"
                        + " source instead");
            }
            Timeouts timeouts = new Timeouts(connectTimeout != null ? connectTimeout : DEFAULT_CONNECT_TIMEOUT,
                    socketTimeout != null ? socketTimeout : DEFAULT_SOCKET_TIMEOUT,
                    statementTimeout != null ? statementTimeout : DEFAULT_STATEMENT_TIMEOUT,
                    idleInTransactionTimeout != null ? idleInTransactionTimeout : DEFAULT_IDLE_IN_TRANSACTION_TIMEOUT);
            if (timeouts.socket().compareTo(timeouts.statement()) <= 0) {
                throw new IllegalStateException("socketTimeout (" + timeouts.socket() + ") must exceed statementTimeout ("
                        + timeouts.statement() + "), or a statement still running on the server loses its connection");
            }
            Tables tables = new Tables(tablePrefix);
            OwnedPool pool = null;
            DataSource ds = dataSource;
            String where;
            if (ds == null) {
                String jdbcUrl = url != null ? url
                        : "jdbc:h2:file:" + embeddedH2.toAbsolutePath().normalize() + EMBEDDED_H2_SETTINGS;
                where = Urls.redact(jdbcUrl);
                ClassPath.requireHikari(url != null ? "url" : "embeddedH2");
                ClassPath.requireDriver(jdbcUrl, where);
                pool = Pools.own(jdbcUrl, where, username, password,
                        maxPoolSize != null ? maxPoolSize : DEFAULT_MAX_POOL_SIZE,
                        poolName != null ? poolName : "sas-" + POOLS.incrementAndGet(), CONNECTION_TIMEOUT, timeouts);
                ds = pool.dataSource();
            } else {
                where = "the given data source " + dataSource.getClass().getName();
            }
            try {
                Jdbi jdbi = Jdbi.create(ds).installPlugin(JdbcStore.PLUGIN);
                Dialect dialect = HandedInDataSources.detect(jdbi, pool == null, DEFAULT_SOCKET_TIMEOUT);
                SchemaManager schema = new SchemaManager(jdbi, dialect, tables);
                if (createSchema) {
                    schema.apply();
                } else {
                    schema.requireApplied();
                }
                String description = dialect.name() + " at " + where + ", table prefix '" + tables.prefix() + "'";
                log.info("SAS state store on {} (schema {}{}; time-outs {})", description,
                        createSchema ? "managed" : "not managed",
                        pool == null ? "" : ", pool " + pool.name() + " max " + pool.maxPoolSize(),
                        pool == null ? "of the given data source" : dialect.describe(timeouts));
                Runnable onReadOnly = pool == null ? () -> { } : pool::dropConnections;
                return new JdbcStateStore(jdbi, dialect, tables, onReadOnly, pool, description, hostTransaction);
            } catch (JdbiException | java.sql.SQLException | IllegalStateException e) {
                HandedInDataSources.closeQuietly(pool, e);
                if (e instanceof IllegalStateException ise) {
                    throw ise;
                }
                throw new StateStoreException("cannot set up the SAS store on " + where + ": " + HandedInDataSources.rootMessage(e), e);
            } catch (RuntimeException e) {
                HandedInDataSources.closeQuietly(pool, e);
                throw e;
            }
        }
    }
}
