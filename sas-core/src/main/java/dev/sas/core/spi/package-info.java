/**
 * What implementers of a state store provide: {@link dev.sas.core.spi.StateStore} and the records
 * it exchanges with the runtime. Application code does not need these types.
 */
package dev.sas.core.spi;
