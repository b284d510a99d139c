package dev.sas.jdbc.internal;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;

/**
 * Rows bound as one array per column, for PostgreSQL's {@code unnest(?::type[], …)}: a statement
 * whose text does not depend on the number of rows, so one prepared statement (and one plan)
 * serves every batch, where a multi-row {@code VALUES} list is a new statement for each length.
 * Column types are PostgreSQL's array element names ({@code varchar}, {@code text}, {@code int4},
 * {@code int8}). Not thread-safe. Not API.
 */
final class ArrayColumns {

    private final String[] types;
    private final Object[][] columns;

    /** Room for {@code rows} rows of columns of {@code types}. */
    ArrayColumns(int rows, String... types) {
        this.types = types.clone();
        this.columns = new Object[types.length][];
        for (int j = 0; j < types.length; j++) {
            columns[j] = switch (types[j]) {
                case "int4" -> new Integer[rows];
                case "int8" -> new Long[rows];
                case "varchar", "text" -> new String[rows];
                default -> throw new IllegalArgumentException("unsupported array element type " + types[j]);
            };
        }
    }

    /** {@code unnest(?::t1[], ?::t2[], …)} for columns of {@code types}. */
    static String unnest(String... types) {
        StringBuilder sql = new StringBuilder("unnest(");
        for (int j = 0; j < types.length; j++) {
            sql.append(j == 0 ? "" : ", ").append("?::").append(types[j]).append("[]");
        }
        return sql.append(')').toString();
    }

    /** The JDBC type of array element type {@code type}, for binding one value. */
    static int sqlType(String type) {
        return switch (type) {
            case "int4" -> java.sql.Types.INTEGER;
            case "int8" -> java.sql.Types.BIGINT;
            default -> java.sql.Types.VARCHAR;
        };
    }

    /**
     * Binds one row's {@code values} (of {@code types}) as single parameters from {@code index} on, for
     * a statement with a placeholder per value; returns the next free index.
     */
    static int bindRow(PreparedStatement ps, int index, Object[] values, String[] types) throws SQLException {
        for (int j = 0; j < values.length; j++) {
            if (values[j] == null) {
                ps.setNull(index++, sqlType(types[j]));
            } else {
                ps.setObject(index++, values[j], sqlType(types[j]));
            }
        }
        return index;
    }

    /** Sets row {@code row} to {@code values}, one per column. */
    void setRow(int row, Object[] values) {
        for (int j = 0; j < values.length; j++) {
            columns[j][row] = values[j];
        }
    }

    /** Binds the columns, one array each, from parameter {@code index} on; returns the next free index. */
    int bind(Connection c, PreparedStatement ps, int index) throws SQLException {
        for (int j = 0; j < columns.length; j++) {
            ps.setArray(index++, c.createArrayOf(types[j], columns[j]));
        }
        return index;
    }
}
