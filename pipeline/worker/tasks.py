"""Celery tasks: thin. Each takes ids, calls :mod:`pipeline.worker.execution` with
the app's storage, configuration, queue and judge pool, and returns."""

from __future__ import annotations

from collections.abc import Callable
from typing import ParamSpec, cast

from celery import shared_task
from flask import current_app

from pipeline.batch import steps
from pipeline.names import (
    BATCH_STEP,
    COMPARE_RUNS,
    COMPUTE_AGREEMENT,
    EVALUATE_CHUNK,
    FINALIZE_RUN,
)
from pipeline.service import agreement, comparison
from pipeline.worker import execution, finalizer

P = ParamSpec("P")


def task(name: str) -> Callable[[Callable[P, None]], Callable[P, None]]:
    """Celery's ``shared_task(name=name)``, typed. Celery has no type
    information, so its decorator would make the tasks untyped (mypy's
    ``untyped-decorator``); a task is called as its function is."""
    return cast(
        Callable[[Callable[P, None]], Callable[P, None]], shared_task(name=name)
    )


def context() -> execution.Context:
    return execution.Context.of(current_app)


@task(EVALUATE_CHUNK)
def evaluate_chunk(run_id: str, chunk: int, _sent: int | None = None) -> None:
    """One chunk of a run (``_sent``: the send it was, which the chunk's row
    holds too: a task of an earlier send finds its claim void)."""
    execution.evaluate_chunk(context(), run_id, chunk)


@task(FINALIZE_RUN)
def finalize_run(run_id: str) -> None:
    finalizer.finalize(current_app.extensions["storage"], run_id, current_app.config)


@task(COMPARE_RUNS)
def compare_runs(key: str) -> None:
    """Compute and store one comparison of finished runs."""
    config = current_app.config
    storage = current_app.extensions["storage"]
    comparison.compute(storage, key, config["UPLOAD_FOLDER"], config)


@task(COMPUTE_AGREEMENT)
def compute_agreement(run_id: str) -> None:
    """The human agreement of the run's queue, whose labels changed, stored
    (the bootstrap takes seconds: no page view waits for it)."""
    ctx = context()
    agreement.compute_for_run(ctx.storage, run_id)
    ctx.dispatch()  # labels given meanwhile asked for the next


@task(BATCH_STEP)
def batch_step(run_id: str) -> None:
    """A batch-mode run's next step: gather and send its requests, or ask
    about its batches and read their answers; then hand out what is due."""
    ctx = context()
    steps.take_step(ctx.storage, ctx.config, run_id)
    ctx.dispatch()
