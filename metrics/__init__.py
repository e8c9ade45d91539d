"""Metric suites and the statistics they share (pure: no Flask, Celery,
requests or SQLAlchemy; the judge is injected).

* :mod:`metrics.suite` — the contract: a suite is one object.
* :mod:`metrics.suites` — one module per suite, each exporting ``SUITE``.
* :mod:`metrics.registry` — collects them; everything else asks it.
* :mod:`metrics.engine` — runs the suites of a run over a chunk of sessions
  and aggregates their rows.
* shared helpers: :mod:`metrics.stats`, :mod:`metrics.rows`,
  :mod:`metrics.judging`, :mod:`metrics.dialogue`, :mod:`metrics.lexicon`;
  a helper that serves one suite lives in that suite's folder (e.g.
  :mod:`metrics.suites.quality.text_units`, :mod:`metrics.suites.slots.matching`),
  and nothing outside ``metrics`` imports a suite (``.importlinter``).

The metric cards in ``docs/metrics/`` give every formula.
"""
