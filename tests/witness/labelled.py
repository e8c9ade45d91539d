"""Human labels for the witness: a served run's replies labelled by zero to
three annotators (imported as a ``labels.jsonl``, docs/web.md "Human labels:
annotation queues"), and what its page's "Human labels" card must say,
computed plainly from the labels and the plan's rows (``reference.py``'s
ρ, τ-b, κ and Krippendorff's α; nothing from ``metrics/``).

docs/web.md defines the card: per judge, Spearman ρ and Kendall τ between
the judge's AL and the annotators' mean AL of each item, Cohen's κ between
its keep-chatting verdict and the annotators' majority (ties left out); the
annotators among themselves, Krippendorff's α (interval for AL, nominal for
the 0/1 answer, over the items two or more of them labelled, with n); α with
the judge as one more annotator; each method's human mean beside the
judge's on the same items. A statistic without a value must say why in its
place (never a bare dash, never "n=0"): with one annotator α "needs two
annotators"; fewer than two items "fewer than 2"; tied majorities "tied";
a constant side "the same value".
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from dataclasses import dataclass
from fractions import Fraction
from html import unescape
from statistics import fmean

from hypothesis import strategies as st

from tests.witness import plans
from tests.witness import reference as ref

ANNOTATORS = ("ana", "ben", "chen")
Key = tuple[str, int, str]


@dataclass(frozen=True)
class Labelling:
    """``labels[annotator][key] = (al, binary or None)``."""

    labels: dict[str, dict[Key, tuple[int, int | None]]]

    def by_item(self) -> dict[Key, dict[str, tuple[int, int | None]]]:
        found: dict[Key, dict[str, tuple[int, int | None]]] = {}
        for annotator, given in self.labels.items():
            for key, label in given.items():
                found.setdefault(key, {})[annotator] = label
        return found


@st.composite
def labellings(draw, plan: plans.Plan) -> Labelling:
    """One to three annotators, each labelling some of the present replies
    (AL in steps of 10, so means and ranks tie; the answer 0, 1 or none)."""
    present = [i for i in plan.items if i.answers is not None]
    annotators = ANNOTATORS[: draw(st.integers(1, 3))]
    labels: dict[str, dict[Key, tuple[int, int | None]]] = {}
    for annotator in annotators:
        given = {}
        for item in present:
            if draw(st.booleans()) or len(present) == 1:
                al = draw(st.sampled_from(range(0, 101, 10)))
                binary = draw(st.sampled_from((0, 1, 1, None)))
                given[(item.session, item.round, item.method)] = (al, binary)
        if given:
            labels[annotator] = given
    return Labelling(labels)


def labels_jsonl(plan: plans.Plan, labelling: Labelling) -> bytes:
    """The labels as the queue exports them: each reply by its text's
    SHA-256 (docs/web.md)."""
    texts = {(i.session, i.round, i.method): plan.text(i) for i in plan.items}
    lines = []
    for annotator, given in labelling.labels.items():
        for key, (al, binary) in given.items():
            sha = hashlib.sha256(texts[key].encode()).hexdigest()
            row = {"response_sha256": sha, "annotator": annotator, "al": al}
            lines.append(json.dumps(row | {"binary": binary}))
    return ("\n".join(lines) + "\n").encode()


def label_run(base_url, session, outcome, plan, labelling) -> str:
    """Import the labels into the run, then the run's page once a worker
    has computed their agreement (docs/web.md: the page says while it is
    being computed)."""
    sent = sum(map(len, labelling.labels.values()))
    answer = session.post(
        f"{base_url}/api/v1/runs/{outcome.manage}/labels",
        files={"file": ("labels.jsonl", labels_jsonl(plan, labelling))},
        timeout=60,
    )
    assert answer.status_code == 200, answer.text
    assert answer.json() == {"imported": sent, "unmatched": 0}, answer.text
    deadline = time.monotonic() + 300
    while True:
        page = session.get(
            f"{base_url}/r/{outcome.token}",
            headers={"Accept-Language": "en"},
            timeout=60,
        ).text
        computed = 'data-testid="human-agreement"' in page
        if computed and 'data-testid="agreement-pending"' not in page:
            return page
        assert 'data-testid="agreement-failed"' not in page, "agreement failed"
        assert time.monotonic() < deadline, (
            "the agreement was never computed: "
            + _text(page.partition('data-testid="annotations"')[2])[:600]
        )
        time.sleep(0.2)


# -- what the card must say ---------------------------------------------------


@dataclass(frozen=True)
class Stat:
    """A statistic: its value, its n, and (without a value) the words its
    reason must hold."""

    value: float | None
    n: int
    reason: str = ""


def _judged(plan: plans.Plan) -> dict[str, dict[Key, tuple]]:
    """``{judge: {key: (al, binary)}}``: the judge's scored AL and vote."""
    found: dict[str, dict[Key, list]] = {}
    for row in plans.expected_rows(plan):
        if row["metric"] in ("al", "binary") and row["status"] == "ok":
            key = (row["session_id"], row["round"], row["method"])
            pair = found.setdefault(row["judge"], {}).setdefault(key, [None, None])
            pair[row["metric"] == "binary"] = row["value"]
    return {j: {k: tuple(v) for k, v in values.items()} for j, values in found.items()}


def _pairwise_stat(pairs, statistic, undefined: str) -> Stat:
    if len(pairs) < 2:
        return Stat(None, len(pairs), "fewer than 2")
    xs = [ref.exact(a) for a, _ in pairs]
    ys = [ref.exact(b) for _, b in pairs]
    value = statistic(xs, ys)
    return Stat(value, len(pairs), "" if value is not None else undefined)


def _majority(votes: list[int]) -> int | None:
    ones = sum(votes)
    return None if not votes or 2 * ones == len(votes) else int(2 * ones > len(votes))


def _alpha(units: list[list[Fraction]], coders: int) -> Stat:
    """α over the items two or more coders labelled."""
    shared = [unit for unit in units if len(unit) >= 2]
    if coders < 2:
        return Stat(None, 0, "two annotators")
    if not shared:
        return Stat(None, 0, "labelled by two")
    if len({v for unit in shared for v in unit}) < 2:
        return Stat(None, len(shared), "every label is the same")
    return Stat(ref.krippendorff_alpha_interval(shared), len(shared))


def expected(plan: plans.Plan, labelling: Labelling) -> dict:
    """The card, from the labels and the plan's rows alone."""
    by_item = labelling.by_item()
    judged = _judged(plan)
    annotators = sorted({a for found in by_item.values() for a in found})
    human_al = {
        k: fmean(al for al, _ in found.values()) for k, found in by_item.items()
    }
    majority = {
        k: _majority([b for _, b in found.values() if b is not None])
        for k, found in by_item.items()
    }
    card = {
        "labels": sum(map(len, by_item.values())),
        "items": len(by_item),
        "annotators": len(annotators),
        "alpha_al": _alpha(
            [[Fraction(al) for al, _ in f.values()] for f in by_item.values()],
            len(annotators),
        ),
        "alpha_binary": _alpha(
            [
                [Fraction(b) for _, b in f.values() if b is not None]
                for f in by_item.values()
            ],
            len(annotators),
        ),
        "judges": {},
        "methods": {},
    }
    for judge, values in sorted(judged.items()):
        mine = {k: v for k, v in values.items() if k in by_item}
        if not mine:
            continue  # a judge that scored none of the labelled replies
        pairs_al = [(v[0], human_al[k]) for k, v in mine.items() if v[0] is not None]
        pairs_vote = [
            (v[1], majority[k])
            for k, v in mine.items()
            if v[1] is not None and majority[k] is not None
        ]
        tied = sum(
            1
            for k, v in mine.items()
            if v[1] is not None
            and majority[k] is None
            and any(b is not None for _, b in by_item[k].values())
        )
        kappa = _pairwise_stat(pairs_vote, ref.cohen_kappa, "one class")
        if kappa.value is None and tied and len(pairs_vote) < 2:
            kappa = Stat(None, len(pairs_vote), "tied")
        with_judge = [
            [Fraction(al) for al, _ in by_item[k].values()]
            + ([ref.exact(v[0])] if v[0] is not None else [])
            for k, v in mine.items()
        ]
        undefined = "same value"
        card["judges"][judge] = {
            "rho": _pairwise_stat(pairs_al, ref.spearman, undefined),
            "tau": _pairwise_stat(pairs_al, ref.kendall_tau_b, undefined),
            "kappa": kappa,
            "n": len(mine),
            "alpha": _alpha(with_judge, len(annotators) + 1),
        }
    for method in sorted({k[2] for k in by_item}):
        keys = [k for k in by_item if k[2] == method]
        card["methods"][method] = {
            "human_al": fmean(human_al[k] for k in keys),
            "n": len(keys),
            "judge_al": {
                judge: fmean(values[k][0] for k in scored)
                for judge, values in judged.items()
                if (
                    scored := [
                        k for k in keys if k in values and values[k][0] is not None
                    ]
                )
            },
        }
    return card


# -- reading the page -----------------------------------------------------------

_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")


def _text(fragment: str) -> str:
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


def _cell_agrees(where: str, cell: str, want: Stat, digits: int, n_shown: bool):
    """A cell shows the value (to ``digits``) or its reason; n when asked."""
    said = _text(cell)
    if want.value is None:
        assert 'data-testid="stat-reason"' in cell, (
            f"{where}: {said!r} without a reason"
        )
        assert want.reason in said, (
            f"{where}: {said!r}, expected a reason with {want.reason!r}"
        )
        assert not re.search(r"n=\d", said), f"{where}: an n beside no value: {said!r}"
        return
    assert 'data-testid="stat-reason"' not in cell, (
        f"{where}: {said!r}, want {want.value}"
    )
    shown = float(_NUMBER.search(said.replace("−", "-")).group().replace(",", ""))
    assert abs(shown - want.value) <= 0.5 * 10**-digits + 1e-9, (
        f"{where}: page {shown}, witness {want.value}"
    )
    n = re.search(r"n=([\d,]+)", said)
    if n_shown:
        assert n and int(n.group(1).replace(",", "")) == want.n, (
            f"{where}: {said!r} n {want.n}"
        )


def card_agrees(plan: plans.Plan, labelling: Labelling, page: str) -> None:
    """The page's "Human labels" card says what the witness computes."""
    want = expected(plan, labelling)
    start = page.index('data-testid="human-agreement"')
    card = page[start : page.index("</div>\n</div>", start)]
    head = _text(card.split("<dl", 1)[0])
    said = [int(n.replace(",", "")) for n in _NUMBER.findall(head)]
    assert said == [want["labels"], want["items"], want["annotators"]], head
    for testid in ("alpha-al", "alpha-binary"):
        cell = re.search(rf'data-testid="{testid}">(.*?)</dd>', card, re.S).group(1)
        found = want[testid.replace("-", "_")]
        _cell_agrees(testid, cell, found, 3, n_shown=True)
    rows = dict(re.findall(r'<tr data-judge="([^"]*)">(.*?)</tr>', card, re.S))
    assert set(rows) == set(want["judges"]), (sorted(rows), sorted(want["judges"]))
    for judge, stats in want["judges"].items():
        cells = re.findall(r"<td[^>]*>(.*?)</td>", rows[judge], re.S)
        for cell, name in zip(cells, ("rho", "tau", "kappa"), strict=False):
            stat = stats[name]
            _cell_agrees(f"{judge} {name}", cell, stat, 2, stat.n != stats["n"])
        assert _text(cells[3]) == str(stats["n"]), (judge, _text(cells[3]))
        _cell_agrees(f"{judge} alpha", cells[4], stats["alpha"], 3, n_shown=True)
    methods_table = card[card.index('data-testid="human-methods"') :]
    shown = dict(
        re.findall(r'<tr><th scope="row">([^<]*)</th>(.*?)</tr>', methods_table, re.S)
    )
    assert set(shown) == set(want["methods"]), (sorted(shown), sorted(want["methods"]))
    judges = list(want["judges"])
    for method, found in want["methods"].items():
        cells = [_text(c) for c in re.findall(r"<td>(.*?)</td>", shown[method], re.S)]
        assert abs(float(cells[0].replace(",", "")) - found["human_al"]) <= 0.05 + 1e-9
        assert cells[1] == str(found["n"]), (method, cells)
        for judge, cell in zip(judges, cells[2:], strict=False):
            mean = found["judge_al"].get(judge)
            if mean is None:
                assert cell == "—", (method, judge, cell)
            else:
                assert abs(float(cell.replace(",", "")) - mean) <= 0.05 + 1e-9, (
                    method,
                    judge,
                    cell,
                    mean,
                )
