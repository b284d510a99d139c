/**
 * Test support for SAS users and store implementers: {@link dev.sas.testing.StateStoreContract},
 * the suite every {@link dev.sas.core.spi.StateStore} must pass, and helpers for testing workflows.
 */
package dev.sas.testing;
