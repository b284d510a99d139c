/**
 * Test and demo support shipped with the core: a {@link dev.sas.core.testing.ManualClock} and an
 * {@link dev.sas.core.testing.InMemoryStateStore}. Not for production state.
 */
package dev.sas.core.testing;
