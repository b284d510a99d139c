/**
 * The SAS operator console: {@link dev.sas.console.SasConsole}, a web page and JSON API over a
 * {@code SasClient}, served with the JDK's HTTP server ({@link dev.sas.console.ConsoleServer}) or
 * mounted in the host's own server.
 */
package dev.sas.console;
