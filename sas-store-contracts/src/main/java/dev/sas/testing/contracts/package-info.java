/**
 * The contract suites every {@link dev.sas.core.spi.StateStore} must pass: extend
 * {@link dev.sas.testing.contracts.StateStoreContract} (and the suites for the capabilities the store
 * has) in a JUnit 5 test and return a fresh store. Needs JUnit 5, AssertJ and Awaitility.
 */
package dev.sas.testing.contracts;
