"""Celery tasks: thin. Each takes ids, calls :mod:`pipeline.execution` with
the app's storage and configuration, and sends the next tasks."""

from __future__ import annotations

from celery import shared_task
from flask import current_app

from pipeline import execution
from pipeline.queue import EVALUATE_CHUNK, FINALIZE_RUN, START_RUN


def _context():
    return current_app.extensions["storage"], current_app.config


@shared_task(name=START_RUN)
def start_run(run_id: str) -> None:
    """Plan the chunks and fan them out; re-sent at start-up for unfinished runs."""
    storage, config = _context()
    plan = execution.plan(storage, config, run_id)
    if plan is None:
        return
    for chunk, start, end in plan.pending:
        evaluate_chunk.delay(run_id, chunk, start, end)
    if plan.complete:
        finalize_run.delay(run_id)


@shared_task(name=EVALUATE_CHUNK)
def evaluate_chunk(run_id: str, chunk: int, start: int, end: int) -> None:
    storage, config = _context()
    if execution.evaluate_chunk(storage, config, run_id, chunk, start, end):
        finalize_run.delay(run_id)


@shared_task(name=FINALIZE_RUN)
def finalize_run(run_id: str) -> None:
    storage, _ = _context()
    execution.finalize(storage, run_id)
