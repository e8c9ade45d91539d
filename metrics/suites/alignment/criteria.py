"""A protocol's criterion modes (``kind = "criterion"``, ``docs/protocols.md``):
the judge scores a reply on one named criterion, on the scale the protocol
declares for it. A verdict off that scale is no verdict (``unscored`` with
``verdict_out_of_scale``, never moved onto it); the row is
``judge_score@<criterion>:<low>-<high>``, beside the human scores of the same
criterion and scale (``human_score@…``) and any recorded judge's
(``recorded@<judge>@…``), so the three meet item by item in the judge audit.

A criterion mode asks the sessions that name its criterion: ``meta.criteria``
(a list) or ``meta.dimension`` (a converted CharacterBench record names its
dimension); a session that names none is asked every criterion. The prompt
may show the character the reply is written as (``meta.character``: name
and persona; its greeting is the history's first turn) and the criterion's reference (``meta.reference``);
earlier turns a file keeps as context (``meta.history``, each
``{speaker, text}``) come before the method's own rounds.

>>> session = {"session_id": "engagement:1", "user_profile": "", "user_personality": "",
...     "meta": {"dimension": "engagement", "character": {"name": "Kit", "profile": "A fox."},
...              "history": [{"speaker": "character", "text": "Hello!"}]},
...     "rounds": [{"round": 1, "user_message": "Hi", "responses": {"M": {"text": "Hey"}}}]}
>>> from metrics import protocols
>>> modes = protocols.builtin("characterbench").criteria()
>>> [mode.criterion for mode in asked(session, modes)]
['engagement']
>>> from metrics.prompt_fields import prompt_fields
>>> fields = prompt_fields(session, "M", 0, "")
>>> print(fields["character"]); print(fields["history"])
Name: Kit
Persona:
A fox.
Kit: Hello!
>>> score_metric(modes["engagement"])
'judge_score@engagement:1-5'
"""

from __future__ import annotations

from statistics import fmean, pstdev
from typing import Any

from core.status import RowStatus
from metrics.items import JUDGE_SCORES
from metrics.judging import Outcome, verdict_of
from metrics.notes import note
from metrics.prompt_fields import _dict, meta_fields
from metrics.rows import ResultRow, RowKey, result_row
from metrics.suite import JudgeMode


def score_metric(mode: JudgeMode) -> str:
    """The row id of a judge's score on the mode's criterion and scale."""
    kind = mode.verdict
    return f"{JUDGE_SCORES}{mode.criterion}:{int(kind.low)}-{int(kind.high)}"


def named(session: dict[str, Any]) -> list[str] | None:
    """The criteria a session names (None: it names none)."""
    meta = _dict(session.get("meta"))
    listed = meta.get("criteria")
    if isinstance(listed, list) and listed:
        return [str(name) for name in listed]
    dimension = meta.get("dimension")
    return [dimension] if isinstance(dimension, str) and dimension else None


def asked(session: dict[str, Any], modes: dict[str, JudgeMode]) -> list[JudgeMode]:
    """The criterion modes a session is asked, in the protocol's order."""
    wanted = named(session)
    return [mode for name, mode in modes.items() if wanted is None or name in wanted]


def rows_from_outcomes(
    key: RowKey, mode: JudgeMode, outcomes: list[Outcome], truncated: int = 0
) -> list[ResultRow]:
    """The criterion's row of one (session, round, method): the mean of its
    samples' scores; ``unscored`` (with the reply and why) when none read."""
    metric = score_metric(mode)
    ok = [o for o in outcomes if o.status == RowStatus.OK]
    kind = mode.verdict
    detail: dict[str, Any] = {
        "criterion": mode.criterion,
        "scale": [int(kind.low), int(kind.high)],
        "prompt_version": mode.prompt,
        "samples": [o.verdict["score"] if o.verdict else None for o in outcomes],
        "reasoning": verdict_of(ok[0]).get("reasoning") if ok else None,
    }
    if truncated:
        detail["history_truncated"] = truncated
    reasked = sum(getattr(o, "reasked", 0) for o in outcomes)
    if reasked:
        detail["reasked"] = reasked
    if not ok:
        failed = outcomes[0]
        detail["raw"] = failed.raw
        unscored = any(o.status == RowStatus.UNSCORED for o in outcomes)
        status = RowStatus.UNSCORED if unscored else RowStatus.ERROR
        return [result_row(key, metric, None, status, failed.note, detail)]
    scores = [verdict_of(o)["score"] for o in ok]

    detail["spread"] = pstdev(scores) if len(scores) > 1 else 0.0
    return [result_row(key, metric, fmean(scores), detail=detail)]


def no_judge_rows(key: RowKey, modes: list[JudgeMode]) -> list[ResultRow]:
    """Without a judge: each asked criterion ``not_configured``."""
    return [
        result_row(key, score_metric(m), None, note=note("no_judge")) for m in modes
    ]


def context_chars(session: dict[str, Any], modes: list[JudgeMode]) -> int:
    """The characters the criterion ``modes`` add to one round's requests
    beyond the fields every mode has: the character, the reference and the
    file's earlier turns, in each mode whose template names them (the cost
    estimate's share of them).

    >>> from metrics import protocols
    >>> mode = protocols.builtin("characterbench").criteria()["engagement"]
    >>> context_chars({"meta": {"character": {"name": "Kit"},
    ...     "history": [{"speaker": "user", "text": "Hi"}]}}, [mode])
    17
    """
    fields = meta_fields(session)
    total = 0
    for mode in modes:
        prompt = mode.template
        used = {*prompt.system.get_identifiers(), *prompt.user.get_identifiers()}
        total += sum(len(text) for name, text in fields.items() if name in used)
    return total
