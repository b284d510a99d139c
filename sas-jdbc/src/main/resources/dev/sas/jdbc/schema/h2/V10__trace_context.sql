-- SAS schema version 10: the submitter's trace context (W3C traceparent and tracestate), restored
-- around the task's steps so one trace spans submit, steps and agent calls across nodes.
ALTER TABLE ${prefix}task ADD COLUMN IF NOT EXISTS trace_context VARCHAR(512);
