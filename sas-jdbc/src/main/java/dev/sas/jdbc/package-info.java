/**
 * A durable {@link dev.sas.core.spi.StateStore} on a JDBC database: H2 (embedded, the default),
 * PostgreSQL, and MariaDB/MySQL. Start with {@link dev.sas.jdbc.JdbcStateStore#builder()}.
 */
package dev.sas.jdbc;
