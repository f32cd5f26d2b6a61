"""Edge agent: capture, pipeline, event derivation, ZeroMQ publish/broker/spool (the edge issue). Not built yet."""
