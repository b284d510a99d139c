/** The {@code sas} command line: {@link dev.sas.cli.SasCli}. An executable, not a library. */
package dev.sas.cli;
