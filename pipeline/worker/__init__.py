"""The worker: the Celery tasks (thin, registered by name), the work they
call (evaluating a chunk, finalizing a run, interim aggregates), the queue
and its brokers (the local folder, Redis), leases' watchdog and the embedded
worker's supervised process."""
