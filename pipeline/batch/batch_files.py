"""A batch-mode run's batch files (``pipeline/batch/steps.py``): the requests its
call caps allow, written as JSONL lines of at most
``JUDGE_BATCH_MAX_REQUESTS`` requests and ``JUDGE_BATCH_MAX_MB`` each,
uploaded through the Files endpoint and made batches; each id stored the
moment the provider gives it."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evaluator import JudgeConfig, run_on_loop
from judge_client.batch_api import BatchAPI
from judge_client.batch_client import Recorder
from pipeline.service.allowance import CallAllowance
from pipeline.service.run_spec import RunSpec

# a step's hold on its run (``store/judge_batches.py``), renewed as it
# works: a worker that died holding it is replaced after this long (at
# once when the embedded worker restarts: ``pipeline/worker/execution.sweep``)
LEASE_S = 300.0

if TYPE_CHECKING:
    from store import StorageLike
    from store.models import Run


def allowed(
    storage: StorageLike, config: dict[str, Any], run: Run, recorder: Recorder
) -> list[tuple[str, dict[str, Any]]]:
    """The requests the run's call caps allow, each taken as it is sent
    (``judge_usage.calls`` counts every request sent, batch lines too)."""
    cap = run.call_cap or config["MAX_JUDGE_CALLS_PER_RUN"]
    allowance = CallAllowance(
        storage.budget,
        run.id,
        cap,
        run.workspace_id,
        config["WORKSPACE_DAILY_JUDGE_CALLS"],
    )
    allowed = []
    try:
        for custom_id in sorted(recorder.bodies):  # the same files after a restart
            if not allowance():
                break  # the rest go online, where the cap refuses them with a note
            allowed.append((custom_id, recorder.bodies[custom_id]))
    finally:
        allowance.release()
    return allowed


def send(
    storage: StorageLike,
    config: dict[str, Any],
    run: Run,
    round_: int,
    model: str,
    found: list[tuple[str, dict[str, Any]]],
) -> None:
    """Upload and create the batches of one model's requests; a part whose
    batch the provider already made (a step run again after a restart) is
    left as it is."""
    api = BatchAPI(judge_config(config, run, model))
    made = {
        b.part: b for b in storage.batches.batches(run.id, round_) if b.model == model
    }
    limit = int(config["JUDGE_BATCH_MAX_MB"] * 1024 * 1024)
    for part, lines in enumerate(
        _parts(found, config["JUDGE_BATCH_MAX_REQUESTS"], limit)
    ):
        storage.batches.hold(run.id, LEASE_S, renew=True)
        known = made.get(part)
        if known is not None and known.batch_id:
            continue
        storage.batches.save_batch(run.id, round_, model, part, total=len(lines))
        # listed before the upload: its output is read against them
        ids = (custom_id for custom_id, _ in lines)
        storage.batches.list_requests(run.id, round_, model, part, ids)
        file_id = known.input_file_id if known is not None else None
        if not file_id:
            file_id = _upload(
                api, [line for _, line in lines], f"{run.id}-{round_}-{part}.jsonl"
            )
            storage.batches.save_batch(
                run.id, round_, model, part, input_file_id=file_id
            )
        # made already, its id lost with the step that made it (a restart
        # between the two): that batch, not a second one
        meta = {"run_id": run.id, "round": str(round_), "part": str(part)}
        made_batch = run_on_loop(api.made_from(file_id)) if known else None
        made_batch = made_batch or run_on_loop(api.create(file_id, meta))
        storage.batches.record_made(run.id, round_, model, part, made_batch, len(lines))


def _parts(
    found: list[tuple[str, dict[str, Any]]], most: int, limit: int
) -> Iterator[list[tuple[str, bytes]]]:
    """The batch files' lines with their ``custom_id``: at most ``most``
    lines and ``limit`` bytes each.

    >>> [len(p) for p in _parts([(str(i), {}) for i in range(5)], 2, 10**6)]
    [2, 2, 1]
    """
    lines: list[tuple[str, bytes]] = []
    size = 0
    for custom_id, body in found:
        record = {
            "custom_id": custom_id,
            "method": "POST",
            "url": "/v1/chat/completions",
            "body": body,
        }
        line = json.dumps(record, ensure_ascii=False).encode() + b"\n"
        if lines and (len(lines) >= most or size + len(line) > limit):
            yield lines
            lines, size = [], 0
        lines.append((custom_id, line))
        size += len(line)
    if lines:
        yield lines


def _upload(api: BatchAPI, lines: list[bytes], name: str) -> str:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        path.write_bytes(b"".join(lines))
        return str(run_on_loop(api.upload(path)))


def judge_config(config: dict[str, Any], run: Run, model: str) -> JudgeConfig:
    judge_config = RunSpec.of(run).judge_config(config, run.id)
    if judge_config is None:
        raise RuntimeError("batch mode without a configured judge")
    return replace(judge_config, model=model)
