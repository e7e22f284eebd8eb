"""The reusable Lambda runtime for the four patterns. Import from the module you need (each keeps
cold starts small by importing only what it uses):

    config             environment variable names (shared with the components) and readers
    retry              call_with_retries, full_jitter_delay: in-handler retries of transient errors
    stream_records     StreamRecord and the event shapes a stream consumer receives
    stream_refetch     read_batch: re-read a KinesisBatchInfo range from the stream
    idempotent_stream  make_handler for the idempotency-supported stream pattern (bisect + Retry-DLQ)
    app_dlq_stream     make_handler for the idempotency-unsupported pattern (the handler parks failures)
    map_batch          process_batch: a Distributed Map child's batch, item by item (per-item failures)
    billing            Charge: the FIFO billing message (group id, deduplication id, validation)

Example: `lambda_handler = idempotent_stream.make_handler(process_record=my_function)`.
"""
