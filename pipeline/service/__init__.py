"""The run service: what the web, the API and the CLI call (creating,
queueing, cancelling, retrying and resuming runs; their requests, recorded
settings, budgets, reuse, kept uploads, comparisons, annotation queues and
judge checks). It sends tasks by name (``pipeline/dispatch.py`` with the
names of ``pipeline/names.py``) and never imports the worker."""
