/**
 * OpenTelemetry tracing for SAS: {@link dev.sas.opentelemetry.OpenTelemetryTracing} stores the
 * submitter's W3C trace context with each task and continues that trace around every step attempt
 * and agent call, on whichever node runs them.
 */
package dev.sas.opentelemetry;
