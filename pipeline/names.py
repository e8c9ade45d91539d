"""The names of the Celery tasks: the contract between whoever sends a task
(by name, through the queue) and the module that runs it. No Celery here."""

TASKS_MODULE = "pipeline.worker.tasks"
START_RUN = "personasteer.start_run"  # first-release runs still in a queue
EVALUATE_CHUNK = "personasteer.evaluate_chunk"
FINALIZE_RUN = "personasteer.finalize_run"
COMPARE_RUNS = "personasteer.compare_runs"
COMPUTE_AGREEMENT = "personasteer.compute_agreement"
BATCH_STEP = "personasteer.batch_step"  # a batch-mode run's next step
