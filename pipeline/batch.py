"""Batch mode (issue 49): a run's judge requests go through the provider's
Batch API (about half the online price, a separate limit, a 24-hour
window), then its chunks run as online ones do, reading the answers.

A batch-mode run moves through stages (``store/judge_batches.py``), each
step a task the dispatcher hands out once (:func:`take_step`):

1. ``collect``: a gathering pass evaluates the run's judge suites with a
   judge that sends nothing (``pipeline/run_judge.py: gathering_judge``):
   every first ask that neither the cache nor an earlier batch answers is
   written to batch files, one model each, split at
   ``JUDGE_BATCH_MAX_REQUESTS`` or ``JUDGE_BATCH_MAX_MB``, uploaded and made
   a batch; each id is stored the moment the provider gives it. Nothing
   new to ask: ``answered``.
2. ``waiting``: the batches are asked about, the first wait
   ``JUDGE_BATCH_FIRST_POLL_S``, each next half as long again; a task asks
   for up to :data:`HOLD_S`, then leaves the next question to a later
   dispatch (``poll_at``). Finished batches' output and error files are
   stored by ``custom_id``; then ``collect`` again, for requests that
   needed these answers (at most :data:`MAX_ROUNDS` rounds).
3. ``answered``: the chunks run. A request the batches answered is read
   from its answer; re-asks, lines that failed or expired, and the
   requests of a batch the provider failed go online (said in ``note``).

A restart finds the stage and the batch ids in the database; a cancelled
run's batches are cancelled (:func:`cancel_batches`).
"""

from __future__ import annotations

import json
import logging
import tempfile
import time
from datetime import timedelta
from functools import partial
from typing import TYPE_CHECKING, Any

import dataset
from core import usage
from core.clock import utcnow
from core.status import ACTIVE_RUN, PROVIDER_FINAL, BatchStage, RunStatus
from evaluator import run_on_loop
from judge_client.batch_api import BatchAPI, BatchAPIError, answers_in
from judge_client.batch_client import Recorder
from judge_client.http import JudgeHTTPError, read_completion
from metrics import engine, registry
from pipeline import batch_files
from pipeline.batch_files import LEASE_S
from pipeline.run_judge import gathering_judge
from pipeline.run_spec import RunSpec
from store.uploads import upload_path

if TYPE_CHECKING:
    from store import StorageLike
    from store.batch_models import BatchRun, JudgeBatch
    from store.models import Run

log = logging.getLogger(__name__)
COLLECT, WAITING, ANSWERED = BatchStage
HOLD_S = 60.0  # a task asks about its batches this long, then lets go
RETRY_S = 30.0  # a provider down or busy is asked again after this long
MAX_ROUNDS = 3  # batches sent one after another; later requests go online
GROWTH = 1.5  # each wait between two questions, half as long again


def take_step(storage: StorageLike, config: dict[str, Any], run_id: str) -> None:
    """The run's next batch step: gather and send, or ask and read. One step
    of a run at a time (a redelivered task finds the run held and leaves)."""
    run = storage.runs.get_run(run_id)
    if run is None or run.status not in ACTIVE_RUN:
        return
    if not storage.batches.hold(run_id, LEASE_S):
        return
    try:
        state = storage.batches.state(run_id)  # as the hold found it
        if state is not None and state.stage == COLLECT:
            _gather_and_send(storage, config, run, state)
        elif state is not None and state.stage == WAITING:
            _poll(storage, config, run, state)
    except BatchAPIError as error:
        log.warning("batch step of run %s: %s", run_id, error)
        _after_error(storage, run_id, error)
    finally:
        storage.batches.let_go(run_id)


def _after_error(storage: StorageLike, run_id: str, error: BatchAPIError) -> None:
    """An endpoint without the batch API (or refusing this run's files):
    the run goes online rather than asking again and again; one down or
    busy is asked again after :data:`RETRY_S`."""
    if error.status is not None and 400 <= error.status < 500 and error.status != 429:
        storage.batches.move(run_id, ANSWERED, note=f"refused:{error.status}")
    else:
        again = utcnow() + timedelta(seconds=RETRY_S)
        state = storage.batches.state(run_id)
        storage.batches.move(run_id, state.stage if state else COLLECT, poll_at=again)


def _gather_and_send(
    storage: StorageLike, config: dict[str, Any], run: Run, state: BatchRun
) -> None:
    if run.status == RunStatus.QUEUED:
        storage.runs.update_run(run.id, status=RunStatus.RUNNING, started_at=utcnow())
    recorders = _gather(storage, config, run)
    if not _active(storage, run.id):
        return  # cancelled while gathering: nothing is sent
    bodies = {
        model: batch_files.allowed(storage, config, run, rec)
        for model, rec in recorders.items()
    }
    if not any(bodies.values()):
        storage.batches.move(run.id, ANSWERED)
        return
    round_ = state.round + 1
    for model, found in bodies.items():
        batch_files.send(storage, config, run, round_, model, found)
    if not _active(storage, run.id):
        # cancelled while sending: the finalizer may have looked before
        # these batches existed, so they are cancelled here
        cancel_batches(storage, config, run)
        return
    first = config["JUDGE_BATCH_FIRST_POLL_S"]
    # asked about from here, still held: a dispatch comes only with the
    # watchdog's next round, and a batch ready in seconds is read in seconds
    storage.batches.move(run.id, WAITING, round=round_, poll_s=first,
                         poll_at=utcnow() + timedelta(seconds=first))  # fmt: skip
    now = storage.batches.state(run.id)
    if now is not None:
        _poll(storage, config, run, now)


def _active(storage: StorageLike, run_id: str) -> bool:
    state = storage.runs.run_state(run_id)
    return state is not None and state[0] in ACTIVE_RUN


def _gather(
    storage: StorageLike, config: dict[str, Any], run: Run
) -> dict[str, Recorder]:
    """The first asks no answer covers yet, by model, in ``custom_id`` order."""
    recorders: dict[str, Recorder] = {}
    judge = gathering_judge(storage, config, run, recorders)
    judged = [name for name in run.suites if registry.get(name).uses_judge]
    if judge is None or not judged:
        return {}
    options = RunSpec.of(run).suite_inputs()
    path = upload_path(config["UPLOAD_FOLDER"], run.upload_id)
    for start, end in storage.batches.chunk_spans(run.id):
        storage.batches.hold(run.id, LEASE_S, renew=True)
        sessions = dataset.read_sessions(path, start, end)
        engine.evaluate(sessions, judged, run.methods, judge, options)
    return recorders


def _poll(
    storage: StorageLike, config: dict[str, Any], run: Run, state: BatchRun
) -> None:
    """Ask about the round's batches until they are read or :data:`HOLD_S`
    passed; then the next stage, or the next question's time."""
    wait = state.poll_s or config["JUDGE_BATCH_FIRST_POLL_S"]
    longest = config["JUDGE_BATCH_MAX_POLL_S"]
    held_until = time.monotonic() + HOLD_S
    while True:
        storage.batches.hold(run.id, LEASE_S, renew=True)
        batches = storage.batches.batches(run.id, state.round)
        for batch in batches:
            if batch.read_at is None and batch.batch_id:
                _refresh(storage, config, run, batch)
        batches = storage.batches.batches(run.id, state.round)
        if all(batch.read_at is not None for batch in batches):
            _after_round(storage, run, state, batches)
            return
        if not _active(storage, run.id):
            return  # cancelled: the finalizer cancels the batches
        if time.monotonic() + wait > held_until:
            storage.batches.move(run.id, WAITING, poll_s=min(wait * GROWTH, longest),
                                 poll_at=utcnow() + timedelta(seconds=wait))  # fmt: skip
            return
        time.sleep(wait)
        wait = min(wait * GROWTH, longest)


def _refresh(
    storage: StorageLike, config: dict[str, Any], run: Run, batch: JudgeBatch
) -> None:
    """One batch as the provider states it; once final, its files read."""
    api = BatchAPI(batch_files.judge_config(config, run, batch.model))
    found = run_on_loop(api.retrieve(str(batch.batch_id)))
    counts = found.get("request_counts") or {}
    values = {"status": str(found.get("status", "")),
              "completed": int(counts.get("completed") or 0),
              "failed": int(counts.get("failed") or 0),
              "output_file_id": found.get("output_file_id"),
              "error_file_id": found.get("error_file_id")}  # fmt: skip
    storage.batches.update_batch(batch.id, **values)
    if values["status"] not in PROVIDER_FINAL:
        return
    for file_id in (values["output_file_id"], values["error_file_id"]):
        if file_id:
            _read_answers(storage, api, run.id, str(file_id), batch.model)
    storage.batches.update_batch(batch.id, read_at=utcnow())


def _read_answers(
    storage: StorageLike, api: BatchAPI, run_id: str, file_id: str, model: str
) -> None:
    """An output or error file's answers stored, a thousand at a time (the
    file goes to disk first, never whole into memory), with the tokens the
    provider billed for them: once per line, however many items of the run
    read a line's answer (identical requests share one)."""
    with tempfile.TemporaryFile() as sink:
        run_on_loop(api.download(file_id, sink))
        sink.seek(0)
        for answers in answers_in(sink):
            storage.batches.put_answers(run_id, answers, partial(_billed, model))


def _billed(model: str, answers: list[dict[str, Any]]) -> dict[str, int]:
    """The run's token counters of the completions among ``answers``
    (``core.usage``: the run's totals, and the model's, as batch tokens)."""
    found: dict[str, int] = {}
    for answer in answers:
        if answer["status_code"] == 200 and isinstance(answer["body"], dict):
            try:
                reply = read_completion(json.dumps(answer["body"]).encode())
            except JudgeHTTPError:
                continue  # no completion in it: the item goes online
            counts = usage.of_reply({**reply, "via": "batch"})
            counts.pop("paced_ms")
            for name, value in counts.items():
                key = usage.key(model, name)
                found[key] = found.get(key, 0) + value
            for total in ("prompt_tokens", "completion_tokens"):
                found[total] = found.get(total, 0) + counts[total]
    return found


def _after_round(
    storage: StorageLike, run: Run, state: BatchRun, batches: list[JudgeBatch]
) -> None:
    """The round's answers are in: gather again (requests that needed them),
    unless the provider failed a batch (its requests go online rather than
    in a batch that may fail the same way) or the rounds are spent. The
    note is a code the pages translate (``web/presentation``)."""
    if any(b.status == "failed" for b in batches):
        storage.batches.move(run.id, ANSWERED, note="failed")
    elif state.round >= MAX_ROUNDS:
        storage.batches.move(run.id, ANSWERED, note="rounds")
    else:
        storage.batches.move(run.id, COLLECT, poll_at=None, poll_s=None)


def cancel_batches(storage: StorageLike, config: dict[str, Any], run: Run) -> int:
    """Cancel the run's batches the provider is still working on; how many."""
    cancelled = 0
    for batch in storage.batches.batches(run.id):
        if batch.batch_id and batch.status not in (*PROVIDER_FINAL, "cancelling"):
            try:
                api = BatchAPI(batch_files.judge_config(config, run, batch.model))
                found = run_on_loop(api.cancel(batch.batch_id))
            except (
                Exception
            ) as exc:  # the run is cancelled either way; say so in the log
                log.warning("cancelling batch %s failed: %s", batch.batch_id, exc)
                continue
            storage.batches.update_batch(batch.id, status=str(found.get("status", "")))
            cancelled += 1
    return cancelled
