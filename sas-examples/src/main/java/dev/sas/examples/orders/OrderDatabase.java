package dev.sas.examples.orders;

import dev.sas.core.SasRuntime;
import dev.sas.core.SubmitOptions;
import dev.sas.core.TaskId;
import dev.sas.core.Workflow;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.time.Clock;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import javax.sql.DataSource;

/**
 * The shop's own database: the {@code orders} table, in the same database as the SAS state
 * store. {@link #place} is the pattern's submission process: the order row and its task commit
 * in one transaction, or neither does. Thread-safe.
 */
public final class OrderDatabase {

    /** The order's row status after placement. */
    public static final String PLACED = "PLACED";
    /** The order's row status after the workflow's last step. */
    public static final String CONFIRMED = "CONFIRMED";

    private final DataSource dataSource;
    private final Clock clock;

    /**
     * @param dataSource the shop's database
     * @param clock the time source for timestamps
     */
    public OrderDatabase(DataSource dataSource, Clock clock) {
        this.dataSource = Objects.requireNonNull(dataSource, "dataSource must not be null");
        this.clock = Objects.requireNonNull(clock, "clock must not be null");
    }

    /**
     * Creates the {@code orders} table if it does not exist.
     *
     * @throws SQLException if the database refuses
     */
    public void createSchema() throws SQLException {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE IF NOT EXISTS orders ("
                    + " order_id VARCHAR(64) PRIMARY KEY,"
                    + " customer VARCHAR(100) NOT NULL,"
                    + " sku VARCHAR(32) NOT NULL,"
                    + " quantity INT NOT NULL,"
                    + " amount_cents BIGINT NOT NULL,"
                    + " address VARCHAR(200) NOT NULL,"
                    + " status VARCHAR(20) NOT NULL,"
                    + " shipment_id VARCHAR(64),"
                    + " task_id VARCHAR(64),"
                    + " placed_at TIMESTAMP NOT NULL,"
                    + " updated_at TIMESTAMP NOT NULL)");
        }
    }

    /**
     * Places an order: inserts its row and submits its task in one transaction, then wakes the
     * scheduler. If anything fails, neither the row nor the task exists.
     *
     * @return the task's id
     * @throws SQLException if the database refused; nothing was placed
     */
    public TaskId place(SasRuntime sas, Workflow<Order> workflow, Order order, String statusChannel) throws SQLException {
        TaskId taskId;
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(false);
            try {
                try (PreparedStatement ps = c.prepareStatement("INSERT INTO orders (order_id, customer, sku, quantity,"
                        + " amount_cents, address, status, placed_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")) {
                    Timestamp now = Timestamp.from(clock.instant());
                    ps.setString(1, order.orderId());
                    ps.setString(2, order.customer());
                    ps.setString(3, order.sku());
                    ps.setInt(4, order.quantity());
                    ps.setLong(5, order.amountCents());
                    ps.setString(6, order.address());
                    ps.setString(7, PLACED);
                    ps.setTimestamp(8, now);
                    ps.setTimestamp(9, now);
                    ps.executeUpdate();
                }
                taskId = sas.client().submit(workflow, order.orderId(), order,
                        SubmitOptions.builder().statusChannel(statusChannel).transaction(c).build()).id();
                try (PreparedStatement ps = c.prepareStatement("UPDATE orders SET task_id = ? WHERE order_id = ?")) {
                    ps.setString(1, taskId.value());
                    ps.setString(2, order.orderId());
                    ps.executeUpdate();
                }
                c.commit();
            } catch (SQLException | RuntimeException e) {
                c.rollback();
                throw e;
            } finally {
                c.setAutoCommit(true);
            }
        }
        sas.pollNow();
        return taskId;
    }

    /**
     * Marks the order confirmed with its shipment. Idempotent, as a step must be.
     *
     * @throws SQLException if the database refused
     * @throws IllegalStateException if the order does not exist
     */
    public void confirm(String orderId, String shipmentId) throws SQLException {
        try (Connection c = dataSource.getConnection();
                PreparedStatement ps = c.prepareStatement(
                        "UPDATE orders SET status = ?, shipment_id = ?, updated_at = ? WHERE order_id = ?")) {
            ps.setString(1, CONFIRMED);
            ps.setString(2, shipmentId);
            ps.setTimestamp(3, Timestamp.from(clock.instant()));
            ps.setString(4, orderId);
            if (ps.executeUpdate() != 1) {
                throw new IllegalStateException("order " + orderId + " is not in the orders table");
            }
        }
    }

    /**
     * Each order's row status, for the orders whose id starts with {@code prefix}.
     *
     * @throws SQLException if the database refused
     */
    public Map<String, String> statuses(String prefix) throws SQLException {
        Map<String, String> out = new HashMap<>();
        try (Connection c = dataSource.getConnection();
                PreparedStatement ps = c.prepareStatement("SELECT order_id, status FROM orders WHERE order_id LIKE ?")) {
            ps.setString(1, prefix + "%");
            try (ResultSet rs = ps.executeQuery()) {
                while (rs.next()) {
                    out.put(rs.getString(1), rs.getString(2));
                }
            }
        }
        return out;
    }
}
