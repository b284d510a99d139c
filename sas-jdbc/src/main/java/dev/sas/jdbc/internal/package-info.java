/**
 * Internals of the JDBC store: dialects, schema scripts and SQL. Not API: anything here may change
 * in any release without notice.
 */
package dev.sas.jdbc.internal;
