"""Metric suites and the statistics they share (pure: no Flask, Celery,
requests or SQLAlchemy; the judge is injected).

* :mod:`metrics.suite` — the contract: a suite is one object.
* :mod:`metrics.suites` — one module per suite, each exporting ``SUITE``.
* :mod:`metrics.registry` — collects them; everything else asks it.
* :mod:`metrics.engine` — runs the suites of a run over a chunk of sessions
  and aggregates their rows.
* helpers: :mod:`metrics.stats`, :mod:`metrics.rows`, :mod:`metrics.judging`,
  :mod:`metrics.dialogue`, :mod:`metrics.text_units`,
  :mod:`metrics.slot_matching`, :mod:`metrics.lexicon`.

The metric cards in ``docs/metrics/`` give every formula.
"""
