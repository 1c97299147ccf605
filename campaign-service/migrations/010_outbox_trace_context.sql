-- The trace context of the change that wrote each outbox row, so its publication joins that trace.
ALTER TABLE outbox ADD COLUMN trace_context jsonb;
