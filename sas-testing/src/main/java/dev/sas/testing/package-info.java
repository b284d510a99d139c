/**
 * Test support for SAS users, free of any test framework: {@link dev.sas.testing.InMemoryStateStore},
 * {@link dev.sas.testing.ManualClock}, {@link dev.sas.testing.Drain} (a runtime driven by hand) and
 * {@link dev.sas.testing.ScriptedAgent}. The store contract suites are in {@code sas-store-contracts}.
 */
package dev.sas.testing;
