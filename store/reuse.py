"""SQL behind reusing an identical finished run (pipeline/service/reuse.py): find
the candidates, and make the copy in one transaction, rows copied in the
database (never through Python). Atomic on purpose: a run that existed
unfinished even for a moment would be planned and evaluated by a worker's
watchdog ("never planned: plan it") while its rows were being copied."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, cast

from sqlalchemy import String, insert, literal, select

from core.status import RunStatus
from store.exchange_models import JudgeExchange
from store.models import ResultRow, Run, RunCacheKey, RunSession
from store.workspaces import new_token

if TYPE_CHECKING:
    from sqlalchemy.engine import CursorResult
    from sqlalchemy.orm import Session

    from store import StorageLike


def finished_with_file(storage: StorageLike, sha256: str, status: str) -> list[Run]:
    """Runs of this file in ``status``, the latest first."""
    query = (
        select(Run)
        .where(Run.file_sha256 == sha256, Run.status == status)
        .order_by(Run.finished_at.desc())
    )
    with storage.session() as db:
        return list(db.scalars(query))


def create_copy(
    storage: StorageLike,
    source: Run,
    spans: Iterable[tuple[str, int, int, int]],
    **fields: Any,
) -> str:
    """A new ``done`` run with ``fields``, the session index ``spans`` and a
    copy of ``source``'s rows, cache-key records and aggregates; its id."""
    now = datetime.now(UTC)
    run = Run(
        id=uuid.uuid4().hex,
        token=new_token(),
        manage_token=new_token(),
        status=RunStatus.DONE.value,
        started_at=now,
        finished_at=now,
        total=source.total,
        done=source.total,
        aggregates=source.aggregates,
        history_truncated=source.history_truncated,
        **fields,
    )
    with storage.session.begin() as db:
        db.add(run)
        db.flush()
        index = [
            {"run_id": run.id, "position": i, "session_id": sid, "start": a, "end": b}
            for i, (sid, a, b, _) in enumerate(spans)
        ]
        if index:
            db.execute(insert(RunSession), index)
        copied = _copy(db, ResultRow, source.id, run.id)
        _copy(db, RunCacheKey, source.id, run.id)
        _copy(db, JudgeExchange, source.id, run.id)
        run.reused_from, run.reused_rows = source.id, copied
    return run.id


def _copy(
    db: Session,
    model: type[ResultRow] | type[RunCacheKey] | type[JudgeExchange],
    source_id: str,
    target_id: str,
) -> int:
    columns = [c for c in model.__table__.c if c.name not in ("id", "run_id")]
    rows = select(literal(target_id, String).label("run_id"), *columns).where(
        model.run_id == source_id
    )
    names = ["run_id", *(c.name for c in columns)]
    copied = db.execute(insert(model).from_select(names, rows))
    # an INSERT's result is a CursorResult (the Session types any Result)
    return cast("CursorResult[Any]", copied).rowcount
