/**
 * Micrometer metrics for SAS: {@link dev.sas.micrometer.SasMicrometer} binds a runtime's counters,
 * its step timings per workflow, step and outcome, and its store's queue depth to a
 * {@code MeterRegistry}.
 */
package dev.sas.micrometer;
