"""The run pipeline, split by side (``.importlinter``: worker, then batch
mode, then the service, then what both share):

* :mod:`pipeline.service`: what the web, the API and the CLI call (the run
  service :mod:`pipeline.service.runs` and its parts). It never imports the
  worker: it sends tasks by name.
* :mod:`pipeline.worker`: what a Celery worker runs (the thin tasks of
  :mod:`pipeline.worker.tasks`, the work they call in
  :mod:`pipeline.worker.execution`, the queue and its brokers, the watchdog,
  the embedded worker's supervised process).
* :mod:`pipeline.batch`: batch mode (the provider's Batch API).
* The modules here, shared by both: the task names (:mod:`pipeline.names`),
  planning and sending by name (:mod:`pipeline.dispatch`), progress, stalls,
  leases and worker beats.
"""
