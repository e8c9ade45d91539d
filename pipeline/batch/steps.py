"""Batch mode (issue 49): a run's judge requests go through the provider's
Batch API (about half the online price, a separate limit, a 24-hour
window), then its chunks run as online ones do, reading the answers.

A batch-mode run moves through stages (``store/judge_batches.py``), each
step a task the dispatcher hands out once (:func:`take_step`):

1. ``collect``: a gathering pass evaluates the run's judge suites with a
   judge that sends nothing (``pipeline/batch/run_judge.py: gathering_judge``):
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

Output files are read defensively: each is downloaded up to
``JUDGE_BATCH_OUTPUT_MAX_MB`` (a larger one fails the batch part:
``output_too_large``) and read line by line; a line that is not a JSON
object, has no ``custom_id``, is not UTF-8 or names a request the run did
not send is skipped and counted (``JudgeBatch.skipped``), and a request no
line answered is stored as missing (it goes online). A step that fails
:data:`MAX_FAILURES` times in a row, whatever the error, fails the batch
part (``step_failed``, with the last error); before that it is taken again
after :data:`RETRY_S`, four times as long after each failure. A failed
batch part cancels the batches still open at the provider, and the
requests without an answer go online.

A restart finds the stage and the batch ids in the database; a cancelled
run's batches are cancelled (:func:`cancel_batches`).
"""

from __future__ import annotations

import json
import logging
import tempfile
import time
from collections import Counter
from datetime import timedelta
from functools import partial
from typing import TYPE_CHECKING, Any

import dataset
from core import usage
from core.clock import utcnow
from core.status import ACTIVE_RUN, PROVIDER_FINAL, BatchStage, RunStatus
from evaluator import run_on_loop
from judge_client.batch_api import BatchAPI, BatchAPIError, OutputTooLarge, answers_in
from judge_client.batch_client import Recorder
from judge_client.http import JudgeHTTPError, read_completion
from metrics import engine, registry
from pipeline.batch import batch_files
from pipeline.batch.batch_files import LEASE_S
from pipeline.batch.run_judge import gathering_judge
from pipeline.service.run_spec import RunSpec
from store.uploads import upload_path

if TYPE_CHECKING:
    from store import StorageLike
    from store.batch_models import BatchRun, JudgeBatch
    from store.models import Run

log = logging.getLogger(__name__)
COLLECT, WAITING, ANSWERED = BatchStage
HOLD_S = 60.0  # a task asks about its batches this long, then lets go
RETRY_S = 30.0  # a failed step is taken again after this long (x4 each time)
MAX_FAILURES = 3  # steps failed in a row that fail the batch part
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
        if state is None or state.stage not in (COLLECT, WAITING):
            return
        try:
            if state.stage == COLLECT:
                _gather_and_send(storage, config, run, state)
            else:
                _poll(storage, config, run, state)
        except OutputTooLarge as error:
            log.warning("batch step of run %s: %s", run_id, error)
            # the cap and the size in the note, as refused:<status>: the
            # page says them in the reader's language
            size = "" if error.size is None else error.size
            note = f"output_too_large:{error.limit}:{size}"
            _fail_part(storage, config, run, note, str(error))
        except BatchAPIError as error:
            log.warning("batch step of run %s: %s", run_id, error)
            _after_error(storage, config, run, error)
        except Exception as error:  # a fault of ours or of what the provider sent
            log.exception("batch step of run %s failed", run_id)
            _after_error(storage, config, run, error)
        else:
            storage.batches.step_ended(run_id)  # the failures in a row: none
    finally:
        storage.batches.let_go(run_id)


def _after_error(
    storage: StorageLike, config: dict[str, Any], run: Run, error: Exception
) -> None:
    """An endpoint without the batch API (or refusing this run's files):
    the run goes online rather than asking again and again. Any other
    failure: the step is taken again after :data:`RETRY_S` (four times as
    long after each failure in a row), and the :data:`MAX_FAILURES`-th in
    a row fails the batch part with its error."""
    status = error.status if isinstance(error, BatchAPIError) else None
    if status is not None and 400 <= status < 500 and status != 429:
        storage.batches.move(run.id, ANSWERED, note=f"refused:{status}")
        return
    said = str(error) if isinstance(error, BatchAPIError) else ""
    said = said or f"{type(error).__name__}: {error}"
    failures = storage.batches.step_ended(run.id, error=said)
    if failures >= MAX_FAILURES:
        _fail_part(storage, config, run, "step_failed", said)
        return
    wait = RETRY_S * 4 ** (failures - 1)
    again = utcnow() + timedelta(seconds=wait)
    state = storage.batches.state(run.id)
    storage.batches.move(run.id, state.stage if state else COLLECT, poll_at=again)


def _fail_part(
    storage: StorageLike, config: dict[str, Any], run: Run, note: str, error: str
) -> None:
    """The batch part ends: the run's chunks run, its requests without an
    answer online (as for a batch the provider failed), and its batches
    still open at the provider are cancelled (else they would be paid as
    well). ``note`` and ``error`` say why on the run's page and status."""
    log.warning("batch part of run %s failed (%s): %s", run.id, note, error)
    storage.batches.move(run.id, ANSWERED, note=note, error=error[:2000], poll_at=None)
    cancel_batches(storage, config, run)


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
    storage.batches.move(
        run.id,
        WAITING,
        round=round_,
        poll_s=first,
        poll_at=utcnow() + timedelta(seconds=first),
    )
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
            storage.batches.move(
                run.id,
                WAITING,
                poll_s=min(wait * GROWTH, longest),
                poll_at=utcnow() + timedelta(seconds=wait),
            )
            return
        time.sleep(wait)
        wait = min(wait * GROWTH, longest)


def _refresh(
    storage: StorageLike, config: dict[str, Any], run: Run, batch: JudgeBatch
) -> None:
    """One batch as the provider states it; once final, its files read."""
    api = BatchAPI(batch_files.judge_config(config, run, batch.model))
    found = run_on_loop(api.retrieve(str(batch.batch_id)))
    counts = found.get("request_counts")
    counts = counts if isinstance(counts, dict) else {}
    values = {
        "status": str(found.get("status", ""))[:32],
        "completed": _count(counts.get("completed")),
        "failed": _count(counts.get("failed")),
        "output_file_id": _text(found.get("output_file_id")),
        "error_file_id": _text(found.get("error_file_id")),
    }
    storage.batches.update_batch(batch.id, **values)
    if values["status"] not in PROVIDER_FINAL:
        return
    limit = int(config["JUDGE_BATCH_OUTPUT_MAX_MB"] * 1024 * 1024)
    listed = batch.listed
    skipped: Counter[str] = Counter()
    for file_id in (values["output_file_id"], values["error_file_id"]):
        if file_id:
            _read_answers(
                storage,
                api,
                run.id,
                str(file_id),
                batch.model,
                limit,
                skipped if listed else None,
            )
    # a failed batch has no files: its requests go online with the note
    missing = 0
    if listed and values["status"] != "failed":
        missing = storage.batches.mark_missing(run.id, batch.id)
    if skipped or missing:
        log.warning(
            "batch %s of run %s: output lines skipped %s, requests missing %d",
            batch.batch_id,
            run.id,
            dict(skipped),
            missing,
        )
    storage.batches.update_batch(
        batch.id, read_at=utcnow(), skipped=dict(skipped), missing=missing
    )


def _text(value: Any) -> str | None:
    return None if value is None else str(value)[:200]


def _count(value: Any) -> int:
    """A count the provider states (0 when it is not a whole number)."""
    return value if type(value) is int and 0 <= value < 2**31 else 0


def _read_answers(
    storage: StorageLike,
    api: BatchAPI,
    run_id: str,
    file_id: str,
    model: str,
    limit: int,
    skipped: Counter[str] | None,
) -> None:
    """An output or error file's answers stored, a thousand at a time (the
    file goes to disk first, at most ``limit`` bytes, never whole into
    memory), with the tokens the provider billed for them: once per line,
    however many items of the run read a line's answer (identical requests
    share one). A line that is no answer, or answers a request the run did
    not send, is counted in ``skipped`` by kind and not stored (``skipped``
    None: a batch whose requests were not listed, every answer is kept)."""
    counted: Counter[str] = Counter() if skipped is None else skipped
    with tempfile.TemporaryFile() as sink:
        run_on_loop(api.download(file_id, sink, limit))
        sink.seek(0)
        for answers in answers_in(sink, skipped=counted):
            storage.batches.hold(run_id, LEASE_S, renew=True)
            if skipped is not None:
                sent = storage.batches.sent_among(
                    run_id, [answer["custom_id"] for answer in answers]
                )
            else:
                sent = {a["custom_id"] for a in answers if len(a["custom_id"]) <= 64}
            if len(sent) < len(answers):
                counted["foreign"] += sum(a["custom_id"] not in sent for a in answers)
                answers = [answer for answer in answers if answer["custom_id"] in sent]
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
