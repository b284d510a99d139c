package dev.sas.rabbitmq;

import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import java.io.IOException;
import java.net.URISyntaxException;
import java.security.GeneralSecurityException;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One connection to a RabbitMQ broker, opened when first needed and opened again on the next use
 * after it broke (the broker restarted, the network dropped): whoever uses it opens a
 * {@link #openChannel() channel} per job and, when an operation on it fails, discards that channel
 * and asks for a new one. The client's own automatic recovery is off, so a failure is always seen by
 * the caller (a publisher retries from the store's outbox instead of trusting a recovered channel).
 *
 * <pre>{@code
 * RabbitConnection rabbit = RabbitConnection.builder().uri("amqp://guest:guest@127.0.0.1:5672")
 *         .connectionName("orders-service").build();
 * }</pre>
 *
 * <p>Thread-safe. {@link #close()} closes the connection; the object cannot be used after.
 */
public final class RabbitConnection implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(RabbitConnection.class);

    /** Default time to open a connection: 10 s. */
    public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(10);

    private final ConnectionFactory factory;
    private final String name;
    private final String where;
    private Connection connection;
    private boolean closed;

    private RabbitConnection(Builder b) {
        this.factory = b.factory.clone();
        this.name = b.connectionName;
        this.where = factory.getHost() + ":" + factory.getPort() + factory.getVirtualHost();
    }

    /** A new builder. Not thread-safe. */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * A new channel on the live connection, opening the connection if there is none or it broke.
     * The caller closes the channel (or abandons it after a failure).
     *
     * @throws IOException if the broker cannot be reached or refuses
     * @throws IllegalStateException if this connection was closed
     */
    public Channel openChannel() throws IOException {
        Connection c = connection();
        Channel channel = c.createChannel();
        if (channel == null) {
            throw new IOException("the broker at " + where + " has no channel left on connection " + name);
        }
        return channel;
    }

    /**
     * The live connection, opened now if there is none or the last one broke.
     *
     * @throws IOException if the broker cannot be reached or refuses
     * @throws IllegalStateException if this connection was closed
     */
    public synchronized Connection connection() throws IOException {
        if (closed) {
            throw new IllegalStateException("RabbitMQ connection " + name + " to " + where + " is closed");
        }
        if (connection != null && connection.isOpen()) {
            return connection;
        }
        if (connection != null) {
            log.info("RabbitMQ connection {} to {} was lost ({}); opening a new one", name, where,
                    connection.getCloseReason() == null ? "closed" : connection.getCloseReason().getMessage());
            connection.abort();
        }
        try {
            connection = factory.newConnection(name);
            log.info("RabbitMQ connection {} to {} open", name, where);
            return connection;
        } catch (TimeoutException e) {
            throw new IOException("opening a connection to RabbitMQ at " + where + " timed out", e);
        }
    }

    /** True if the connection is open now (it is opened on use, so false before the first use). */
    public synchronized boolean isOpen() {
        return connection != null && connection.isOpen();
    }

    /** Where it connects (host, port and virtual host; no credentials). */
    public String address() {
        return where;
    }

    /** Closes the connection, if open. Idempotent. */
    @Override
    public synchronized void close() {
        closed = true;
        if (connection != null) {
            try {
                connection.close(5_000);
            } catch (IOException | RuntimeException e) {
                connection.abort();
            }
            connection = null;
        }
    }

    @Override
    public String toString() {
        return "RabbitConnection{" + name + " to " + where + '}';
    }

    /** Builds a {@link RabbitConnection}. Not thread-safe. */
    public static final class Builder {
        private final ConnectionFactory factory = new ConnectionFactory();
        private String connectionName = "sas";
        private boolean uriSet;

        private Builder() {
            factory.setAutomaticRecoveryEnabled(false);
            factory.setTopologyRecoveryEnabled(false);
            factory.setConnectionTimeout((int) DEFAULT_CONNECT_TIMEOUT.toMillis());
        }

        /**
         * The broker, as an AMQP URI ({@code amqp://user:password@host:5672/vhost}, or {@code amqps://}).
         * Required. The password is never logged.
         *
         * @throws NullPointerException if null
         * @throws IllegalArgumentException if it is not a valid AMQP URI
         */
        public Builder uri(String uri) {
            Objects.requireNonNull(uri, "uri must not be null");
            try {
                factory.setUri(uri);
            } catch (URISyntaxException | GeneralSecurityException | IllegalArgumentException e) {
                throw new IllegalArgumentException("uri must be an AMQP URI such as amqp://user:password@host:5672,"
                        + " was one that does not parse (" + e.getClass().getSimpleName() + ")", e);
            }
            uriSet = true;
            return this;
        }

        /**
         * The name the broker shows for the connection (management UI, {@code rabbitmqctl
         * list_connections}). Default {@code sas}.
         *
         * @throws NullPointerException if null
         * @throws IllegalArgumentException if blank
         */
        public Builder connectionName(String name) {
            Objects.requireNonNull(name, "connectionName must not be null");
            if (name.isBlank()) {
                throw new IllegalArgumentException("connectionName must not be blank");
            }
            this.connectionName = name;
            return this;
        }

        /**
         * How long opening a connection may take. Default 10 s.
         *
         * @throws NullPointerException if null
         * @throws IllegalArgumentException if not positive or longer than {@link Integer#MAX_VALUE} ms
         */
        public Builder connectTimeout(Duration timeout) {
            Objects.requireNonNull(timeout, "connectTimeout must not be null");
            if (timeout.isZero() || timeout.isNegative() || timeout.toMillis() > Integer.MAX_VALUE) {
                throw new IllegalArgumentException("connectTimeout must be positive, was " + timeout);
            }
            factory.setConnectionTimeout((int) timeout.toMillis());
            factory.setHandshakeTimeout((int) timeout.toMillis());
            return this;
        }

        /**
         * The connection (not opened yet: it opens on first use).
         *
         * @throws IllegalStateException if no URI was given
         */
        public RabbitConnection build() {
            if (!uriSet) {
                throw new IllegalStateException("uri is required: call uri(...) before build()");
            }
            return new RabbitConnection(this);
        }
    }
}
