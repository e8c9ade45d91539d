"""Generated runs for the witness: what each judge answers to each reply,
the input file that scripts it, and the rows the results must hold.

A plan fixes, for every (session, round, method) of a small file, whether
the reply is missing and, per judge of the panel, what that judge does
with it: a verdict (an AL total and a keep-chatting vote), a reply with no
usable verdict (garbage, a JSON score under a key the mode does not
declare, the prompt's format example repeated, a number without a scale)
or HTTP 500. The scripted judge (``testing/judge_server.py``) reads those
choices from directives in the reply text, ``[[al@judge-b=70]]``, so the
expected rows follow from the plan alone: nothing here reads the product's
numbers.

Values are drawn from small sets (AL totals in steps of 10, votes over one
to three rounds) so that means tie, differences come out in thirds and
panels disagree by whole points: the edges where float noise and pooling
rules show.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path

from hypothesis import strategies as st

from testing.judge_decisions import split_total
from testing.judge_natives import scaled

JUDGES = ("judge-a", "judge-b")
METHODS = ("Base", "Ours", "RAG")
# an ALOE-protocol run may come as ALOE's own file (its two replies per
# message), converted as a user converts it: its session ids must be kept
ALOE_METHODS = ("preferred", "rejected")
PROTOCOLS = ("personasteer", "personasteer-zh", "mt-bench", "aloe")
DIMENSIONS = ("style", "content", "naturalness", "personalization", "conversation")
# what the product must make of each reply with no usable verdict: asked
# again once (a re-ask), then unscored
UNREADABLE = ("garbage", "undeclared_json", "format_example", "scaleless")
FAILED = "http_500"  # every request of it answered 500: an error row
STRENGTHS = (0, 20, 40)
PROFILE = "A 22-year-old nursing student in Seoul who hikes."
LONGER = " She keeps a trail journal of every ridge, river and hut." * 80


@dataclass(frozen=True)
class Answer:
    """What one judge does with one reply: ``kind`` "verdict" (with the AL
    total, 0-100 in steps of 10, and the vote), one of ``UNREADABLE`` or
    ``FAILED``."""

    kind: str
    total: int = 0
    vote: int = 0

    def directives(self, judge: str) -> str:
        if self.kind == "verdict":
            return f"[[al@{judge}={self.total}]] [[binary@{judge}={self.vote}]]"
        if self.kind == FAILED:
            return f"[[fault@{judge}=500x99]]"
        if self.kind == "garbage":
            return f"[[fault@{judge}=garbage]]"
        return f"[[reply@{judge}={self.kind}]]"


@dataclass(frozen=True)
class Item:
    """One (session, round, method): ``answers`` per judge, or None when the
    file has no reply there."""

    session: str
    round: int
    method: str
    answers: tuple[Answer, ...] | None
    # in a pair, the stronger reply wins (strengths 20 apart: an upset has
    # probability 2e-9), equal ones tie (testing/judge_decisions.py)
    strength: int = 0


@dataclass
class Plan:
    protocol: str
    judges: tuple[str, ...]
    methods: tuple[str, ...]  # in the file's order
    sessions: int
    rounds: int
    items: list[Item]
    # cancelled once the judge has answered this many requests of the run
    # (None: never); the run keeps the sessions whose chunks were stored
    cancel_after: int | None = None
    suites: tuple[str, ...] = ("alignment",)
    # of a cancelled run: the (session, suite) whose rows it stored (a chunk
    # stores each suite's rows of its sessions in turn); None: everything
    stored: frozenset[tuple[str, str]] | None = None
    # set when the plan is run: each run's text is its own (an identical
    # file would reuse an earlier run's rows and send nothing)
    nonce: str = ""
    layout: str = "ours"  # or "aloe": ALOE's conversations file, converted
    # sent through the provider's Batch API (the served witness)
    batch: bool = False
    # a profile long enough (over 1,024 tokens) that the scripted judge's
    # prompt cache serves a session's later requests in part
    long_profile: bool = False

    @property
    def modes(self) -> tuple[str, ...]:
        """The judge modes the protocol asks (MT-Bench and ALOE: no vote)."""
        return (
            ("alignment", "binary")
            if self.protocol.startswith("personasteer")
            else ("alignment",)
        )

    def text(self, item: Item) -> str | None:
        if item.answers is None:
            return None
        said = " ".join(
            a.directives(j) for j, a in zip(self.judges, item.answers, strict=True)
        )
        strength = f"[[strength={item.strength}]]"
        head = f"Reply {self.nonce} {item.session} {item.round} {item.method}."
        return f"{head} {said} {strength}"

    def sessions_jsonl(self) -> list[dict]:
        found = []
        for s in range(self.sessions):
            session = f"s{s + 1}"
            rounds = []
            for k in range(1, self.rounds + 1):
                responses = {}
                for item in self.items:
                    if (item.session, item.round) == (session, k):
                        responses[item.method] = self.text(item)
                rounds.append(
                    {
                        "round": k,
                        "user_message": f"Message {k} of {session}.",
                        "responses": responses,
                    }
                )
            found.append(
                {
                    "session_id": session,
                    "user_profile": PROFILE + (LONGER if self.long_profile else ""),
                    "user_personality": "curious, introverted",
                    "rounds": rounds,
                }
            )
        return found

    def write(self, path: Path) -> Path:
        lines = (json.dumps(s, ensure_ascii=False) for s in self.sessions_jsonl())
        path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        return path

    def write_aloe(self, path: Path) -> Path:
        """The sessions as ALOE's conversations file (its profile and
        personality JSON-quoted lines, a record's own ``session_id``)."""
        records = []
        for session in self.sessions_jsonl():
            turns = [
                {
                    "user": r["user_message"],
                    "assistant": {m: r["responses"].get(m) for m in ALOE_METHODS},
                    "chosen": "preferred",
                }
                for r in session["rounds"]
            ]
            records.append(
                {
                    "session_id": session["session_id"],
                    "profile": json.dumps(session["user_profile"]) + "\n",
                    "personality": json.dumps(session["user_personality"]) + "\n",
                    "conversations": turns,
                }
            )
        lines = (json.dumps(record, ensure_ascii=False) for record in records)
        path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        return path


def answers(kinds: st.SearchStrategy[str]) -> st.SearchStrategy[Answer]:
    verdict = st.builds(
        Answer,
        kind=st.just("verdict"),
        total=st.sampled_from((30, 40, 50, 60, 70, 80, 90)),
        vote=st.sampled_from((0, 1)),
    )
    other = kinds.map(lambda kind: Answer(kind))
    return st.one_of(verdict, verdict, verdict, other)


@st.composite
def thirds(draw, protocol: str) -> Plan:
    """Six to thirteen sessions of three rounds whose session values differ
    by thirds: each session one method has one more "keep chatting" vote
    (and one more 10-point AL step) than the other, either way, so the
    differences are ±1/3 (votes) and ±10/3 (AL), equal on paper and unequal
    in the last bit once averaged (1 − 2/3 against 1/3)."""
    sessions = draw(st.integers(6, 13))
    methods = tuple(draw(st.permutations(METHODS[:2])))
    items = []
    for s in range(1, sessions + 1):
        ahead = draw(st.sampled_from(methods))
        base = draw(st.integers(0, 2))  # the other's votes, of three
        for method in methods:
            votes = base + (method == ahead)
            for k in range(1, 4):
                vote = int(k <= votes)
                answer = Answer("verdict", 50 + 10 * vote, vote)
                items.append(Item(f"s{s}", k, method, (answer,)))
    return Plan(protocol, JUDGES[:1], methods, sessions, 3, items)


@st.composite
def plans(draw, protocols=PROTOCOLS) -> Plan:
    """A run of 1-3 sessions, 1-3 rounds, 2-3 methods in any order, one or
    two judges; a judge may fail some or all of its items; replies may be
    missing (never all of them)."""
    protocol = draw(st.sampled_from(protocols))
    if draw(st.integers(0, 7)) == 0:  # one run in eight: ties of thirds
        return draw(thirds(protocol))
    judges = JUDGES[: draw(st.integers(1, 2))]
    methods = tuple(draw(st.permutations(METHODS))[: draw(st.integers(2, 3))])
    layout = "ours"
    if protocol == "aloe" and draw(st.integers(0, 2)) == 0:  # ALOE's own file
        methods, layout = ALOE_METHODS, "aloe"
    sessions, rounds = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    failing = (
        draw(st.sampled_from(("some", "some", "every"))) if len(judges) == 2 else "some"
    )
    # one strategy for every answer: built (and validated) once a plan, not
    # once an answer (a third of the plans' drawing time)
    answer = answers(st.sampled_from((*UNREADABLE, FAILED)))
    items = []
    for s in range(1, sessions + 1):
        for k in range(1, rounds + 1):
            for method in methods:
                if draw(st.integers(0, 9)) == 0:
                    items.append(Item(f"s{s}", k, method, None))
                    continue
                found = [draw(answer) for _ in judges]
                if failing == "every":
                    found[-1] = Answer(FAILED)
                strength = draw(st.sampled_from(STRENGTHS))
                items.append(Item(f"s{s}", k, method, tuple(found), strength))
    # a file needs a reply; a record of ALOE's file is converted only with one
    for first in _needing_a_reply(items, layout):
        items[items.index(first)] = Item(
            first.session,
            first.round,
            first.method,
            tuple(Answer("verdict", 50, 1) for _ in judges),
        )
    # cancelled early (every chunk under way: nothing stored) or later (some
    # chunks stored their sessions, or the run ended first)
    late = st.integers(12, 60)
    cancel_after = draw(st.one_of(st.none(), st.none(), st.integers(0, 12), late))
    suites = draw(st.sampled_from((("alignment",), ("alignment", "pairwise"))))
    return replace(
        Plan(protocol, judges, methods, sessions, rounds, items, cancel_after, suites),
        layout=layout,
    )


def _needing_a_reply(items: list[Item], layout: str) -> list[Item]:
    """The first item of the file (of each session, in ALOE's layout) when
    every reply there is missing."""
    groups: dict[str, list[Item]] = {}
    for item in items:
        groups.setdefault(item.session if layout == "aloe" else "", []).append(item)
    return [
        group[0]
        for group in groups.values()
        if all(item.answers is None for item in group)
    ]


def kept(plan: Plan, stored: set[tuple[str, str]]) -> Plan:
    """The plan of what a cancelled run stored: each suite's rows of the
    sessions whose chunk stored them."""
    return replace(plan, stored=frozenset(stored))


def suite_of(metric: str) -> str:
    return "pairwise" if metric.partition("@")[0] == "pairwise" else "alignment"


# --- what the results must hold -------------------------------------------


def on_scale(plan: Plan, total: int) -> float:
    """The AL the protocol's verdict stands for: PersonaSteer's 0-100
    total; MT-Bench's 1-10 and ALOE's 1-5 ratings on their own scale."""
    if plan.protocol == "mt-bench":
        return float(scaled(total, 10))
    if plan.protocol == "aloe":
        return float(scaled(total, 5))
    return float(total)


def expected_rows(plan: Plan) -> list[dict]:
    """Every row the plan's run must store, as ``{session_id, round, method,
    metric, judge, status, value}``; the alignment suite's rows only."""
    rows = []
    for item in plan.items:
        key = {"session_id": item.session, "round": item.round, "method": item.method}
        if item.answers is None:
            missing = {"status": "missing", "value": None, "note_code": "reply_missing"}
            rows.append({**key, "metric": "al", "judge": "", **missing})
            continue
        for judge, answer in zip(plan.judges, item.answers, strict=True):
            rows += _judged(plan, key, judge, answer, len(plan.text(item) or ""))
    if "pairwise" in plan.suites:
        rows += _paired(plan)
    if plan.stored is None:
        return rows
    return [r for r in rows if (r["session_id"], suite_of(r["metric"])) in plan.stored]


def _pairs(plan: Plan):
    """Every ordered pair of replies of one (session, round), both present."""
    present = [item for item in plan.items if item.answers is not None]
    for item in present:
        for other in present:
            same = (other.session, other.round) == (item.session, item.round)
            if same and other.method != item.method:
                yield item, other


def _paired(plan: Plan) -> list[dict]:
    """The pairwise suite's rows: ``pairwise@<opponent>`` of each method
    against each other one present in the round, per judge (1 won, ½ tie,
    0 lost: asked in both orders, which agree), and a ``missing`` row of a
    missing reply."""
    rows = []
    asked = plan.protocol != "aloe"  # ALOE has no pairwise mode
    for item, other in _pairs(plan):
        won = (item.strength > other.strength) + (item.strength >= other.strength)
        key = {"session_id": item.session, "round": item.round, "method": item.method}
        for judge in plan.judges:
            found = {"metric": f"pairwise@{other.method}", "judge": judge}
            if asked:
                chars = [len(plan.text(item) or ""), len(plan.text(other) or "")]
                rows.append(
                    {**key, **found, "status": "ok", "value": won / 2, "chars": chars}
                )
            else:
                lacks = {"status": "not_applicable", "note_code": "protocol_lacks"}
                rows.append({**key, **found, **lacks, "value": None})
    for item in plan.items:
        if item.answers is None:
            key = {"session_id": item.session, "round": item.round}
            missing = {"method": item.method, "metric": "pairwise", "judge": ""}
            rows.append({**key, **missing, "status": "missing", "value": None})
    return rows


def _judged(
    plan: Plan, key: dict, judge: str, answer: Answer, chars: int
) -> list[dict]:
    def row(metric, status, value=None):
        note = "protocol_lacks" if status == "not_applicable" else None
        found = {"metric": metric, "judge": judge, "status": status, "value": value}
        return {**key, **found, "note_code": note}

    found = [row("response_chars", "ok", float(chars))]
    dims = [f"al_{d}" for d in DIMENSIONS]
    status = {"verdict": "ok", FAILED: "error"}.get(answer.kind, "unscored")
    al = on_scale(plan, answer.total) if status == "ok" else None
    found.append(row("al", status, al))
    if "binary" not in plan.modes:
        found += [row(m, "not_applicable") for m in (*dims, "binary")]
        return found
    parts = split_total(answer.total)
    found += [
        row(m, status, float(p) if status == "ok" else None)
        for m, p in zip(dims, parts, strict=True)
    ]
    found.append(row("binary", status, float(answer.vote) if status == "ok" else None))
    return found


def expected_calls(plan: Plan) -> dict[str, dict[str, int]]:
    """Per judge: requests sent (a reply with no usable verdict is asked
    once more; a 500 is not retried: the witness runs with no retries),
    re-asks, and two requests per pair of replies in the pairwise suite."""
    found = {judge: {"calls": 0, "reasks": 0} for judge in plan.judges}
    for item in plan.items:
        for judge, answer in zip(plan.judges, item.answers or (), strict=False):
            for _mode in plan.modes:
                again = answer.kind in UNREADABLE
                found[judge]["calls"] += 2 if again else 1
                found[judge]["reasks"] += int(again)
    if "pairwise" in plan.suites and plan.protocol != "aloe":
        for judge in plan.judges:  # each ordered pair is one of the two orders
            found[judge]["calls"] += sum(1 for _ in _pairs(plan))
    return found
