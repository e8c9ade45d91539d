"""The run pipeline: the run service (:mod:`pipeline.runs`) that the web, the
API and the CLI share; the queue (:mod:`pipeline.queue`: Celery, Redis or
the embedded worker); the thin Celery tasks (:mod:`pipeline.tasks`) and the
work they call (:mod:`pipeline.execution`).

The service sends tasks by name through the queue and never imports the
tasks module; tasks never import the service.
"""
