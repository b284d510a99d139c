/**
 * JSON for SAS on Jackson: {@link dev.sas.jackson.JsonCodec} is a {@link dev.sas.core.Codec}
 * for workflow inputs, typed step outputs and agent replies, covering records, generic types,
 * {@code Optional} and {@code java.time}. Optional module: add {@code dev.sas:sas-jackson} only if
 * you want JSON; {@code sas-core} does not depend on Jackson.
 */
package dev.sas.jackson;
