"""The shared vocabulary every layer speaks: statuses, problems, lazy text.

Nothing here imports another package of the project or a framework, so the
dataset code, the metric suites, storage, the pipeline and the web layer can
all use one definition of each fact.
"""
