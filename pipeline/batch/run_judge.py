"""The judge a chunk's claim asks: the run's judge (or panel) with its
cache, its call allowance, and the stop check that renews the chunk's
lease (``pipeline/leases.py``) and ends the calls of a cancelled run."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import partial, wraps
from time import monotonic
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar, cast

from core.status import Cancelled, LeaseLost, RunStatus, StorageUnavailable
from evaluator import Judge, JudgeConfig, JudgePanel, JudgePool, StructuredOutput, Usage
from judge_client.batch_client import BatchClient, Recorder
from judge_client.exchanges import Exchanges
from judge_client.http import JudgeClient
from metrics import registry
from pipeline.leases import LEASES
from pipeline.service.allowance import CallAllowance
from pipeline.service.run_spec import RunSpec

if TYPE_CHECKING:
    from store import StorageLike
    from store.chunks import Chunk
    from store.judge_cache import JudgeCache
    from store.models import Run

GATHERING_CONCURRENCY = 64  # a gathering pass sends nothing: no reason to queue
BEAT_EVERY_S = 10.0  # a judging chunk renews its lease at least this often
# judge_client's ``Usage()`` has no annotations (its ``__init__`` takes nothing)
_new_usage = cast("Callable[[], Usage]", Usage)
P = ParamSpec("P")
R = TypeVar("R")


def judge_for(
    storage: StorageLike,
    config: dict[str, Any],
    pool: JudgePool | None,
    run: Run,
    chunk: Chunk,
    on_items: Callable[[int], None] | None = None,
) -> Judge | JudgePanel | None:
    """The run's judge for one claim of a chunk, or None when no suite of it
    asks one or none is configured. ``on_items(n)``: n more items have
    their outcome."""
    if not any(registry.get(name).uses_judge for name in run.suites):
        return None
    spec = RunSpec.of(run)
    judge_config = spec.judge_config(config, run.id)
    if judge_config is None:
        return None
    cache = _cache_for(storage, judge_config, run, attempt_holder(chunk))
    lease_s = config["CHUNK_STALL_S"]
    stop = _stop_and_beat(storage, run.id, chunk, min(BEAT_EVERY_S, lease_s / 4))
    usage = _new_usage()
    used = storage.progress.judge_usage(run.id)
    cap = run.call_cap or config["MAX_JUDGE_CALLS_PER_RUN"]
    allowance = CallAllowance(
        storage.budget,
        run.id,
        cap,
        run.workspace_id,
        config["WORKSPACE_DAILY_JUDGE_CALLS"],
    )
    judges = []
    for model in spec.judge.models or [judge_config.model]:
        one_config = replace(judge_config, model=model)
        judges.append(
            Judge(
                one_config,
                cache=cache,
                should_stop=stop,
                pool=pool,
                on_items=on_items,
                usage=usage,
                allowance=allowance,
                fair_key=run.id,
                exchanges=Exchanges(model),
                client=_batch_client(storage, run, one_config)
                if spec.judge.batch
                else None,
                structured=_structured(used, model),
            )
        )
    return judges[0] if len(judges) == 1 else JudgePanel(judges)


def attempt_holder(chunk: Chunk) -> str:
    """Who holds the judge requests of this claim of the chunk: its holder
    (this process, for a claim it made), then the attempt
    (``core.holders.attempt``)."""
    return f"{chunk.holder or LEASES.holder}:{chunk.chunk}.{chunk.lease}"


def gathering_judge(
    storage: StorageLike,
    config: dict[str, Any],
    run: Run,
    recorders: dict[str, Recorder],
) -> Judge | JudgePanel | None:
    """The judge of a batch-mode run's gathering pass: it reads the
    verdicts the cache has and the answers the batches gave, records every
    other first ask in ``recorders[model]`` and sends nothing."""
    spec = RunSpec.of(run)
    judge_config = spec.judge_config(config, run.id)
    if judge_config is None:
        return None
    cache = _ReadOnly(_cache_for(storage, judge_config, run, f"{LEASES.holder}:gather"))
    used = storage.progress.judge_usage(run.id)
    pool = JudgePool(GATHERING_CONCURRENCY)
    judges = []
    for model in spec.judge.models or [judge_config.model]:
        one_config = replace(judge_config, model=model)
        recorder = recorders.setdefault(model, Recorder())
        client = _batch_client(storage, run, one_config, recorder)
        judges.append(
            Judge(
                one_config,
                cache=cache,
                client=client,
                pool=pool,
                structured=_structured(used, model),
            )
        )
    return judges[0] if len(judges) == 1 else JudgePanel(judges)


def _batch_client(
    storage: StorageLike,
    run: Run,
    config: JudgeConfig,
    recorder: Recorder | None = None,
) -> BatchClient:
    """A batch-mode run's client: the batches' answers first (each looked
    up by its request's ``custom_id``), then online (``batch_client.py``)."""
    answer_of = _on_storage(partial(storage.batches.answer, run.id))
    return BatchClient(JudgeClient(config), answer_of, recorder)


def _structured(used: dict[str, dict[str, int]], model: str) -> StructuredOutput:
    """A server that refused structured output in an earlier chunk is not
    asked again: the text grammar reads its replies."""
    return StructuredOutput(
        refused=bool(used.get(model, {}).get("structured_rejected"))
    )


class _ReadOnly:
    """A cache a gathering pass reads and never claims or writes."""

    def __init__(self, cache: JudgeCache):
        self.get = cache.get

    def put(self, entries: list[dict[str, Any]]) -> None:
        pass


def taken_exchanges(judge: Judge | JudgePanel | None) -> list[dict[str, Any]]:
    """What the judge (each of a panel) kept of its exchanges since the
    last take: the chunk stores them with the rows they scored."""
    judges = judge.judges if isinstance(judge, JudgePanel) else [judge]
    return [
        found
        for one in judges
        if one is not None and one.exchanges is not None
        for found in one.exchanges.take()
    ]


def _cache_for(
    storage: StorageLike, config: JudgeConfig, run: Run, holder: str
) -> JudgeCache:
    """The run's judge cache: its team's (workspace, else client), or, for a
    run asked not to reuse verdicts, its own. Either way the verdicts the
    run paid for are kept, and its requests under way are claimed for as
    long as one with its retries takes, so a chunk taken over (a lease
    expired, a task redelivered) pays nothing twice. ``holder``: this claim
    of the chunk (its process, its lease), so a later claim of it in the
    same process awaits the earlier one's calls too."""
    # here, not at the top: light commands (help, validate) load no SQLAlchemy
    from store.judge_cache import JudgeCache

    if RunSpec.of(run).judge.use_cache:
        scope = run.workspace_id or f"client:{run.client or ''}"
    else:
        scope = f"run:{run.id}"
    # each attempt ends by the run's deadline (its timeout bounds one read
    # only), plus a minute for the back-offs between them
    per_attempt = max(config.deadline_s, config.timeout_s)
    deadline = per_attempt * (config.max_retries + 1)
    return JudgeCache(
        storage.judge_cache, run.id, scope, holder=holder, claim_s=deadline + 60.0
    )


def _stop_and_beat(
    storage: StorageLike, run_id: str, chunk: Chunk, every_s: float
) -> Callable[[], bool]:
    """Asked by the judge between calls: is the run cancelled? It also
    renews the chunk's lease every ``every_s`` and raises ``LeaseLost`` when
    another worker took it (this one was stopped or starved past it)."""
    last_beat = [monotonic()]

    def should_stop() -> bool:
        if monotonic() - last_beat[0] >= every_s:
            if not storage.chunks.beat(run_id, chunk.chunk, chunk.lease):
                raise LeaseLost(f"chunk {chunk.chunk} of run {run_id}")
            last_beat[0] = monotonic()
        state = storage.runs.run_state(run_id)  # one small query, twice a second
        return state is None or state[0] == RunStatus.CANCELLED

    return _on_storage(should_stop)


def _on_storage(function: Callable[P, R]) -> Callable[P, R]:
    """``function``, which asks the database: its failures (a cancel aside)
    are the storage's, raised as ``StorageUnavailable``, so they fail the
    chunk's attempt instead of its suite's rows (``metrics/engine.py``)."""

    @wraps(function)
    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return function(*args, **kwargs)
        except (Cancelled, StorageUnavailable):
            raise
        except Exception as exc:
            raise StorageUnavailable.of(exc) from exc

    return call
