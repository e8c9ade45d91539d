"""The names of the Celery tasks: the contract between whoever sends a task
(by name, through the queue) and the module that runs it. No Celery here."""

TASKS_MODULE = "pipeline.worker.tasks"
EVALUATE_CHUNK = "personasteer.evaluate_chunk"
FINALIZE_RUN = "personasteer.finalize_run"
COMPARE_RUNS = "personasteer.compare_runs"
COMPUTE_AGREEMENT = "personasteer.compute_agreement"
BATCH_STEP = "personasteer.batch_step"  # a batch-mode run's next step
