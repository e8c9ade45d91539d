"""What a run's pages say it covers when it did not finish: a cancelled
run's stored results (``pipeline/worker/interim.cancel_cover``, counted from its
stored rows when it was summarized), each suite's share of them, why its
rows table is empty, and the progress a list of runs shows for it, in the
same units as its page.

A cancelled run's ``done`` counter is no measure of its results: it counts
the work of chunks under way, and a chunk stopped by the cancel stores
nothing. Its pages count the stored rows instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from core.status import RunStatus
from metrics import registry
from reports.formatting import count
from translations import _, metric_label

if TYPE_CHECKING:
    from reports import Reported
    from store.models import Run


def stored_cover(run: Reported) -> dict[str, Any] | None:
    """A summarized cancelled run's ``cancel_cover``; None for any other run
    and for a cancelled run of an earlier release (summarized without it)."""
    if getattr(run, "status", None) != RunStatus.CANCELLED:
        return None
    cover: dict[str, Any] | None = (run.aggregates or {}).get("cancel_cover")
    return cover


def suite_sessions(run: Reported, suite: str) -> int | None:
    """Sessions a cancelled run stored the suite's results for; None when
    the run was not cancelled or is not summarized yet. A run of an earlier
    release only says how many sessions have any row."""
    if getattr(run, "status", None) != RunStatus.CANCELLED or not run.aggregates:
        return None
    cover = stored_cover(run)
    if cover is not None:
        return int(cover["by_suite"].get(suite, 0))
    return 0 if not run.aggregates.get("sessions_scored") else None


def suite_note(run: Reported, suite: str) -> dict[str, str | None]:
    """What a suite's card says of a cancelled run: ``empty``, the reason
    it has nothing to show when the suite stored no result (not the suite's
    own "needs a configured judge"), or ``covers``, how many sessions its
    results cover when they are fewer than the run's."""
    covered = suite_sessions(run, suite)
    if covered == 0:
        return {
            "empty": _(
                "The run was cancelled before this suite stored any "
                "result: there is nothing to show."
            ),
            "covers": None,
        }
    if covered is not None:  # only a cancelled Run has a count (suite_sessions)
        total = cast("Run", run).sessions
        if covered < total:
            covers = _(
                "Cancelled: this suite's results cover %(sessions)s of %(total)s sessions.",
                sessions=count(covered),
                total=count(total),
            )
            return {"empty": None, "covers": covers}
    return {"empty": None, "covers": None}


def rows_empty(run: Run, filters: dict[str, Any]) -> str:
    """Why the rows table of ``run`` has no row under ``filters``."""
    filtered = any(value is not None for value in filters.values())
    if getattr(run, "status", None) != RunStatus.CANCELLED:
        if filtered:
            return _("No row matches these filters.")
        return _("This run stored no result row.")
    metric: str | None = filters.get("metric")
    spec = registry.spec(metric) if metric else None
    if metric and spec is not None and suite_sessions(run, spec.suite) == 0:
        return _(
            "The run was cancelled before any row of %(metric)s was stored.",
            metric=metric_label(metric),
        )
    if filtered:
        return _(
            "No row matches these filters. The run was cancelled before it "
            "finished: rows it had not stored are not here."
        )
    return _("The run was cancelled before any result row was stored.")


def progress_cell(run: Run) -> dict[str, Any]:
    """What a list of runs shows of a run's progress: ``done`` of ``total``
    in ``unit`` (``responses`` or ``sessions``); ``stored``: counted from a
    cancelled run's stored rows, as its page does; ``pending``: a cancelled
    run whose rows are still being summarized (nothing to count yet).

    >>> from types import SimpleNamespace as Run
    >>> progress_cell(Run(status="running", done=17, total=492, aggregates=None))
    {'done': 17, 'total': 492, 'unit': 'responses', 'stored': False, 'pending': False}
    >>> cover = {"responses": 0, "of_responses": 492, "complete": 0, "partial": 0,
    ...          "of_sessions": 30, "by_suite": {}}
    >>> progress_cell(Run(status="cancelled", done=17, total=492, sessions=30,
    ...                   aggregates={"cancel_cover": cover}))["done"]
    0
    """
    shown = {
        "done": run.done,
        "total": run.total,
        "unit": "responses",
        "stored": False,
        "pending": False,
    }
    if run.status != RunStatus.CANCELLED:
        return shown
    if not run.aggregates:
        return {**shown, "pending": True}
    cover = stored_cover(run)
    if cover is not None and cover.get("responses") is not None:
        return {
            **shown,
            "done": cover["responses"],
            "total": cover["of_responses"],
            "stored": True,
        }
    if cover is not None:
        sessions = cover["complete"] + cover["partial"]
    else:  # an earlier release's summary: the sessions with any row
        sessions = run.aggregates.get("sessions_scored") or 0
    return {
        **shown,
        "done": sessions,
        "total": run.sessions,
        "unit": "sessions",
        "stored": True,
    }
