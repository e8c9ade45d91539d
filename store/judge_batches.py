"""A batch-mode run's batches (``storage.batches``, models in
``store/batch_models.py``): its stage, each batch file at the provider, the
answers read back, and the dispatcher's claim on the run's next step."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, exists, func, literal, select, update

from core import usage
from core.problems import Problem
from core.status import ACTIVE_RUN, BatchStage
from store.batch_models import BatchAnswer, BatchRequest, BatchRun, JudgeBatch
from store.database import Repository
from store.models import Run, RunChunk, utcnow
from store.progress import add_to_run
from store.sql import batched, claim_each

COLLECT, WAITING = BatchStage.COLLECT.value, BatchStage.WAITING.value
PIECE = 1000  # request ids written or looked up at a time
MISSING = "missing_from_output"  # a sent request no output line answered


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

    def save_batch(
        self, run_id: str, round_: int, model: str, part: int, **values: Any
    ) -> None:
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
        self,
        run_id: str,
        round_: int,
        model: str,
        part: int,
        made: dict[str, Any],
        lines: int,
    ) -> None:
        """A part's batch as the provider made it, and its lines counted as
        the run's judge calls, in one transaction: a step that dies between
        the two neither loses the count nor counts a part twice."""
        key = (
            JudgeBatch.run_id == run_id,
            JudgeBatch.round == round_,
            JudgeBatch.model == model,
            JudgeBatch.part == part,
        )
        values = {"batch_id": made["id"], "status": str(made.get("status", ""))}
        with self.engine.begin() as conn:
            conn.execute(update(JudgeBatch).where(*key).values(**values))
            add_to_run(
                conn,
                run_id,
                judge_calls=lines,
                **{
                    usage.key(model, "calls"): lines,
                    usage.key(model, "batch_calls"): lines,
                },
            )

    def update_batch(self, row: int, **values: Any) -> None:
        """One batch's row (``row``: its id here; ``batch_id`` is the provider's)."""
        with self.engine.begin() as conn:
            conn.execute(
                update(JudgeBatch).where(JudgeBatch.id == row).values(**values)
            )

    def put_answers(
        self,
        run_id: str,
        answers: list[dict[str, Any]],
        counters: Callable[[list[dict[str, Any]]], dict[str, int]],
    ) -> int:
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

    def list_requests(
        self, run_id: str, round_: int, model: str, part: int, ids: Iterable[str]
    ) -> None:
        """The requests a part's batch file holds, listed before it is
        uploaded (listed again, e.g. by a step run after a restart: kept once)."""
        key = (
            JudgeBatch.run_id == run_id,
            JudgeBatch.round == round_,
            JudgeBatch.model == model,
            JudgeBatch.part == part,
        )
        with self.engine.begin() as conn:
            row = conn.execute(select(JudgeBatch.id).where(*key)).scalar_one()
            conn.execute(
                update(JudgeBatch).where(JudgeBatch.id == row).values(listed=True)
            )
            for piece in batched(ids, PIECE):
                rows = [{"run_id": run_id, "custom_id": c, "batch": row} for c in piece]
                conn.execute(
                    self.database.insert(BatchRequest)
                    .values(rows)
                    .on_conflict_do_nothing(index_elements=["run_id", "custom_id"])
                )

    def sent_among(self, run_id: str, ids: list[str]) -> set[str]:
        """Those of ``ids`` that name a request the run sent in a batch."""
        found: set[str] = set()
        with self.engine.connect() as conn:
            for piece in batched(ids, PIECE):
                query = select(BatchRequest.custom_id).where(
                    BatchRequest.run_id == run_id, BatchRequest.custom_id.in_(piece)
                )
                found.update(conn.scalars(query))
        return found

    def mark_missing(self, run_id: str, row: int) -> int:
        """The batch's requests that no line of its files answered, stored
        as answers without a response (:data:`MISSING`: they go online, and
        no later batch sends them again); how many."""
        answered = exists().where(
            BatchAnswer.run_id == run_id,
            BatchAnswer.custom_id == BatchRequest.custom_id,
        )
        missing = select(
            literal(run_id), BatchRequest.custom_id, literal(MISSING)
        ).where(BatchRequest.batch == row, BatchRequest.run_id == run_id, ~answered)
        insert = (
            self.database.insert(BatchAnswer)
            .from_select(["run_id", "custom_id", "error"], missing)
            .on_conflict_do_nothing(index_elements=["run_id", "custom_id"])
        )
        with self.engine.begin() as conn:
            conn.execute(insert)
            count = (
                select(func.count())
                .select_from(BatchRequest)
                .join(
                    BatchAnswer,
                    and_(
                        BatchAnswer.run_id == BatchRequest.run_id,
                        BatchAnswer.custom_id == BatchRequest.custom_id,
                    ),
                )
                .where(BatchRequest.batch == row, BatchAnswer.error == MISSING)
            )
            return int(conn.execute(count).scalar_one())

    def step_ended(self, run_id: str, error: str | None = None) -> int:
        """A step of the run ended: failed with ``error`` (one more in a
        row), or well (None: the count starts again; a batch part that failed
        keeps its reason). The steps failed in a row now."""
        query = update(BatchRun).where(BatchRun.run_id == run_id)
        if error is None:
            kept = BatchRun.note.is_(None) | (BatchRun.note != "step_failed")
            query = query.where(BatchRun.failures > 0, kept)
            values: dict[str, Any] = {"failures": 0, "error": None}
        else:
            values = {"failures": BatchRun.failures + 1, "error": error[:2000]}
        with self.engine.begin() as conn:
            conn.execute(query.values(**values))
            found = select(BatchRun.failures).where(BatchRun.run_id == run_id)
            return int(conn.execute(found).scalar_one_or_none() or 0)

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
            "stage": state.stage,
            "round": state.round,
            "note": state.note,
            "done": sum(b.completed + b.failed for b in open_),
            "total": sum(b.total for b in open_),
            # steps failed in a row and the last one's error (a step that
            # keeps failing: the third fails the batch part)
            "failures": state.failures,
            "error": state.error,
        }

    def outcome(self, run_id: str) -> dict[str, Any] | None:
        """How the run's batch part went (None: an online run): its stage,
        why it went online (``note``, ``reason`` in English, and ``notes``:
        problems the pages translate), the steps failed in a row, the lines
        of its output files skipped by kind and the requests they missed."""
        state = self.state(run_id)
        if state is None:
            return None
        skipped: Counter[str] = Counter()
        missing = 0
        for made in self.batches(run_id):
            skipped.update(made.skipped or {})
            missing += made.missing
        notes = [_note(state)] if state.note else []
        if skipped:
            kinds = ", ".join(f"{kind} {n}" for kind, n in sorted(skipped.items()))
            notes.append(
                Problem.make(
                    None,
                    "",
                    "batch_lines_skipped",
                    count=sum(skipped.values()),
                    kinds=kinds,
                )
            )
        if missing:
            notes.append(
                Problem.make(None, "", "batch_requests_missing", count=missing)
            )
        return {
            "stage": state.stage,
            "round": state.round,
            "note": state.note,
            "reason": notes[0].message if state.note else None,
            "failures": state.failures,
            "error": state.error,
            "skipped": dict(skipped),
            "missing": missing,
            "notes": [problem.to_dict() for problem in notes],
        }


def _over_cap(said: str, error: str) -> Problem:
    """An output file over the cap: ``said`` is ``<cap>:<size>`` (bytes;
    the size empty when the provider did not say it); a part that failed
    before the note carried them says its English error."""
    cap, _, size = said.partition(":")
    if not cap.isdigit():
        return Problem.make(None, "", "batch_output_too_large", error=error)
    if not size.isdigit():
        return Problem.make(
            None, "", "batch_output_over_cap_unsized", cap=f"{int(cap):,}"
        )
    return Problem.make(
        None, "", "batch_output_over_cap", cap=f"{int(cap):,}", size=f"{int(size):,}"
    )


def _note(state: BatchRun) -> Problem:
    """Why the run's batch part ended before its requests were answered
    (``note``: ``failed``, ``refused:<status>``, ``rounds``,
    ``step_failed``, ``output_too_large:<cap>:<size>``), as a problem."""
    code, _, status = str(state.note).partition(":")
    error = state.error or ""
    match code:
        case "refused":
            return Problem.make(None, "", "batch_refused", status=status)
        case "rounds":
            return Problem.make(None, "", "batch_rounds")
        case "step_failed":
            return Problem.make(
                None, "", "batch_step_failed", failures=state.failures, error=error
            )
        case "output_too_large":
            return _over_cap(status, error)
    return Problem.make(None, "", "batch_failed")
