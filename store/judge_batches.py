"""A batch-mode run's batches (``storage.batches``, models in
``store/batch_models.py``): its stage, each batch file at the provider, the
answers read back, and the dispatcher's claim on the run's next step."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select, update

from core import usage
from core.status import ACTIVE_RUN, BatchStage
from store.batch_models import BatchAnswer, BatchRun, JudgeBatch
from store.database import Repository
from store.models import Run, RunChunk, utcnow
from store.progress import add_to_run
from store.sql import claim_each

COLLECT, WAITING = BatchStage.COLLECT.value, BatchStage.WAITING.value


class BatchQueries(Repository):
    def begin(self, run_id: str) -> None:
        """A batch-mode run, made: its requests are to be gathered."""
        with self.engine.begin() as conn:
            insert = self.database.insert(BatchRun).values(
                run_id=run_id, stage=COLLECT, round=0
            )
            conn.execute(insert.on_conflict_do_nothing(index_elements=["run_id"]))

    def state(self, run_id: str) -> BatchRun | None:
        with self.database.session() as db:
            return db.get(BatchRun, run_id)

    def claim_due(self, sent_before: datetime) -> list[str]:
        """The batch-mode runs whose next step a worker is to take now:
        requests to gather, or batches due to be asked about, and no step
        holding the run. Each is claimed once however many dispatchers ask;
        a claim older than ``sent_before`` (its task lost) is handed out again."""
        now = utcnow()
        active = select(Run.id).where(Run.status.in_([s.value for s in ACTIVE_RUN]))
        due = (
            BatchRun.run_id.in_(active)
            & (BatchRun.sent_at.is_(None) | (BatchRun.sent_at < sent_before))
            & (BatchRun.held_until.is_(None) | (BatchRun.held_until < now))
            & BatchRun.stage.in_([COLLECT, WAITING])
            & (BatchRun.poll_at.is_(None) | (BatchRun.poll_at <= now))
        )
        with self.engine.begin() as conn:
            return claim_each(conn, BatchRun.run_id, due, sent_at=now)

    def hold(self, run_id: str, seconds: float, renew: bool = False) -> bool:
        """Hold the run for a step for ``seconds``: False when another step
        holds it (unless ``renew``: the holder extends its own hold)."""
        now = utcnow()
        query = update(BatchRun).where(BatchRun.run_id == run_id)
        if not renew:
            query = query.where(
                BatchRun.held_until.is_(None) | (BatchRun.held_until < now)
            )
        with self.engine.begin() as conn:
            changed = conn.execute(
                query.values(held_until=now + timedelta(seconds=seconds))
            )
            return changed.rowcount == 1

    def let_go(self, run_id: str) -> None:
        """The step ended: its hold and its claim with it."""
        with self.engine.begin() as conn:
            conn.execute(
                update(BatchRun)
                .where(BatchRun.run_id == run_id)
                .values(held_until=None, sent_at=None)
            )

    def chunk_spans(self, run_id: str) -> list[tuple[int, int]]:
        """The byte ranges of the run's chunks, in order (a gathering pass
        reads the upload a chunk at a time)."""
        query = (
            select(RunChunk.start, RunChunk.end)
            .where(RunChunk.run_id == run_id)
            .order_by(RunChunk.chunk)
        )
        with self.engine.connect() as conn:
            return [(start or 0, end or 0) for start, end in conn.execute(query)]

    def forget_claims(self) -> None:
        """Every hold and claim given up: called by the only worker of the
        database as it starts (their holders died with the last one), so a
        restart asks about its batches at once, not when they go stale."""
        with self.engine.begin() as conn:
            conn.execute(update(BatchRun).values(sent_at=None, held_until=None))

    def move(self, run_id: str, stage: str, **values: Any) -> None:
        """The run's next stage (the step that moves it still holds it)."""
        with self.engine.begin() as conn:
            conn.execute(
                update(BatchRun)
                .where(BatchRun.run_id == run_id)
                .values(stage=stage, **values)
            )

    def batches(self, run_id: str, round_: int | None = None) -> list[JudgeBatch]:
        query = select(JudgeBatch).where(JudgeBatch.run_id == run_id)
        if round_ is not None:
            query = query.where(JudgeBatch.round == round_)
        with self.database.session() as db:
            return list(db.scalars(query.order_by(JudgeBatch.id)))

    def save_batch(self, run_id: str, round_: int, model: str, part: int,
                   **values: Any) -> None:  # fmt: skip
        """Record (or update) one part's batch as the provider states it."""
        key = {"run_id": run_id, "round": round_, "model": model, "part": part}
        fresh = {"status": "uploading", "total": 0, "completed": 0, "failed": 0}
        insert = self.database.insert(JudgeBatch).values(**key, **{**fresh, **values})
        with self.engine.begin() as conn:
            conn.execute(
                insert.on_conflict_do_update(
                    index_elements=list(key), set_=values or {"status": "uploading"}
                )
            )

    def record_made(
        self, run_id: str, round_: int, model: str, part: int,
        made: dict[str, Any], lines: int,
    ) -> None:  # fmt: skip
        """A part's batch as the provider made it, and its lines counted as
        the run's judge calls, in one transaction: a step that dies between
        the two neither loses the count nor counts a part twice."""
        key = (JudgeBatch.run_id == run_id, JudgeBatch.round == round_,
               JudgeBatch.model == model, JudgeBatch.part == part)  # fmt: skip
        values = {"batch_id": made["id"], "status": str(made.get("status", ""))}
        with self.engine.begin() as conn:
            conn.execute(update(JudgeBatch).where(*key).values(**values))
            add_to_run(conn, run_id, judge_calls=lines,
                       **{usage.key(model, "calls"): lines,
                          usage.key(model, "batch_calls"): lines})  # fmt: skip

    def update_batch(self, row: int, **values: Any) -> None:
        """One batch's row (``row``: its id here; ``batch_id`` is the provider's)."""
        with self.engine.begin() as conn:
            conn.execute(
                update(JudgeBatch).where(JudgeBatch.id == row).values(**values)
            )

    def put_answers(
        self, run_id: str, answers: list[dict[str, Any]],
        counters: Callable[[list[dict[str, Any]]], dict[str, int]],
    ) -> int:  # fmt: skip
        """Store answers by ``custom_id``, and add to the run's counters
        ``counters(new)`` of the answers not stored before, in the same
        transaction: a file read twice (a step redone) is kept and counted
        once. Returns how many were new."""
        rows = [{**answer, "run_id": run_id} for answer in answers]
        if not rows:
            return 0
        insert = (
            self.database.insert(BatchAnswer)
            .values(rows)
            .on_conflict_do_nothing(index_elements=["run_id", "custom_id"])
            .returning(BatchAnswer.custom_id)
        )
        with self.engine.begin() as conn:
            new = set(conn.scalars(insert))
            fresh = [answer for answer in answers if answer["custom_id"] in new]
            add_to_run(conn, run_id, **counters(fresh))
        return len(fresh)

    def answer(self, run_id: str, custom_id: str) -> BatchAnswer | None:
        with self.database.session() as db:
            return db.get(BatchAnswer, (run_id, custom_id))

    def progress(self, run_id: str) -> dict[str, Any] | None:
        """The run's batch stage and, while it waits, the requests of its
        open batches done (completed or failed) of all; None: online."""
        state = self.state(run_id)
        if state is None:
            return None
        open_ = [b for b in self.batches(run_id, state.round) if b.read_at is None]
        return {
            "stage": state.stage, "round": state.round, "note": state.note,
            "done": sum(b.completed + b.failed for b in open_),
            "total": sum(b.total for b in open_),
        }  # fmt: skip
