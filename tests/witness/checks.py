"""The witness's checks: what a run's results must say, from its plan alone
(rows, statuses, run status, calls, tokens, cost), and, through
``tests/witness/reference.py``, every aggregate."""

from __future__ import annotations

import math
import re
from collections import Counter
from html import unescape
from itertools import groupby

from dataset import validate_file
from tests.witness import plans, published
from tests.witness import reference as ref
from tests.witness.differences import BLOCKS
from tests.witness.harness import BATCH_PRICES, PRICES, Outcome

ROW_KEY = ("session_id", "round", "method", "metric", "judge")
WITNESSED = {"al", "binary", "response_chars", *(f"al_{d}" for d in plans.DIMENSIONS)}


def witnessed(metric: str) -> bool:
    return metric in WITNESSED or metric.partition("@")[0] == "pairwise"


def _key(row: dict) -> tuple:
    return tuple(
        row.get(field) or ("" if field == "judge" else row.get(field))
        for field in ROW_KEY
    )


def rows_agree(plan: plans.Plan, document: dict) -> None:
    """Every row the plan implies is in the document with its status and
    value, and the document has no other row of those metrics."""
    expected = {_key(row): row for row in plans.expected_rows(plan)}
    found = {_key(row): row for row in document["rows"] if witnessed(row["metric"])}
    assert set(found) == set(expected), (
        f"rows only in the results: {sorted(set(found) - set(expected))[:5]}; "
        f"rows the plan implies but missing: {sorted(set(expected) - set(found))[:5]}"
    )
    for key, row in expected.items():
        got = found[key]
        assert (got["status"], got["value"]) == (row["status"], row["value"]), (
            f"{key}: results say {got['status']} {got['value']}, the plan {row['status']} {row['value']}"
            f" (note {got.get('note_code')})"
        )


def expected_status(plan: plans.Plan) -> str:
    """done, partial, or failed when no judge reply could be read."""
    rows = plans.expected_rows(plan)
    statuses = Counter(
        row["status"] for row in rows if row["metric"] != "response_chars"
    )
    if not statuses["ok"]:
        return "failed"
    return "partial" if statuses["unscored"] or statuses["error"] else "done"


def as_stored(plan: plans.Plan, document: dict) -> plans.Plan:
    """The plan of what the run stored: all of it, or for a cancelled run
    (only a plan that asked to cancel may be) the sessions it kept."""
    if document["run"]["status"] != "cancelled":
        return plan
    assert plan.cancel_after is not None, "a run nobody cancelled says cancelled"
    stored = {(r["session_id"], plans.suite_of(r["metric"])) for r in document["rows"]}
    return plans.kept(plan, stored)


def status_agrees(plan: plans.Plan, document: dict) -> None:
    if document["run"]["status"] != "cancelled":
        assert document["run"]["status"] == expected_status(plan)


NO_USAGE = {"calls": 0, "cached": 0, "reasks": 0, "prompt_tokens": 0}
NO_USAGE |= {"completion_tokens": 0, "cost_usd": 0.0}


def usage_agrees(plan: plans.Plan, outcome: Outcome, cancelled: bool) -> None:
    """Requests per judge as the judge counted them and, for a run that ran
    to its end, as the plan implies (with re-asks); tokens as the scripted
    judge reported them; cost at the run's prices. A judge never asked may
    be absent from ``judge_usage``."""
    usage = outcome.document["judge_usage"]
    calls = plans.expected_calls(plan)
    assert set(usage) <= set(plan.judges)
    for judge in plan.judges:
        got = usage.get(judge, NO_USAGE)
        # the judge counts the requests it was sent online; the batch lines
        # are counted below, over the judges
        online = got["calls"] - got.get("batch_calls", 0)
        assert (online, got["cached"]) == (outcome.asked[judge], 0), (
            f"{judge}: judge_usage says {online} requests online ({got['cached']} "
            f"cached), the judge took {outcome.asked[judge]}"
        )
        if not cancelled and not plan.batch:  # (a batch line a provider
            # failed is asked again online: the plan counts online requests)
            want = calls[judge]
            assert (got["calls"], got["reasks"]) == (want["calls"], want["reasks"]), (
                judge
            )
        reported = outcome.reported.get(judge, Counter())
        for tokens in ("prompt_tokens", "completion_tokens", "cached_tokens"):
            assert got.get(tokens, 0) == reported[tokens], (judge, tokens)
        assert math.isclose(
            got["cost_usd"], _cost(judge, got, reported), rel_tol=1e-9, abs_tol=1e-12
        ), judge
    batched = sum(u.get("batch_calls", 0) for u in usage.values())
    assert batched == outcome.batch_lines, (
        f"judge_usage: {batched} requests in batch files, the provider got "
        f"{outcome.batch_lines} batch lines"
    )
    if not plan.batch:
        assert batched == 0
    counts = outcome.document["run"]["counts"]
    taken = outcome.taken()
    assert counts["judge_calls"] == taken, (
        f"header: {counts['judge_calls']} judge calls, the judge took {taken}"
    )


def _cost(judge: str, usage: dict, reported: Counter) -> float:
    """US$ of the tokens the judge reported: the batch files' part (as
    judge_usage splits it) at the batch prices, the rest at the online ones
    (docs/judge.md; no cached-input price is set: cached tokens cost as
    the others)."""
    (price_in, price_out), (batch_in, batch_out) = PRICES[judge], BATCH_PRICES[judge]
    batch_prompt = usage.get("batch_prompt_tokens", 0)
    batch_completion = usage.get("batch_completion_tokens", 0)
    online = (reported["prompt_tokens"] - batch_prompt) * price_in
    online += (reported["completion_tokens"] - batch_completion) * price_out
    return (online + batch_prompt * batch_in + batch_completion * batch_out) / 1e6


def everything_agrees(plan: plans.Plan, outcome: Outcome) -> None:
    """Rows, status, counts, calls and cost, every aggregate."""
    document = outcome.document
    stored = as_stored(plan, document)
    rows_agree(stored, document)
    status_agrees(stored, document)
    counts_agree(stored, document)
    usage_agrees(stored, outcome, cancelled=stored is not plan)
    aggregates_agree(stored, document)
    position_agrees(stored, document)


def position_agrees(plan: plans.Plan, document: dict) -> None:
    """Position bias, from what the scripted judge does: each pair is asked
    in both orders and the stronger reply wins in both (equal ones tie), so
    every comparison's two orders agree (``position_consistency`` 1) and
    each decisive comparison gives two single-order verdicts naming a
    winner, one of them the first reply (``first_position_rate`` 0.5, its
    n twice the decisive comparisons, over the judges: pairwise.md "Judge
    validity", results-format's n). The rows do not say which order chose
    what, so the reference cannot compute these; the plan can."""
    decisive, compared = 0, 0
    for row in plans.expected_rows(plan):
        method, _, other = row["metric"].partition("@")
        if method != "pairwise" or row["status"] != "ok" or other < row["method"]:
            continue  # each comparison once: its row of the first method by name
        compared += 1
        decisive += row["value"] != 0.5
    validity = document["judge_validity"]
    found = {
        k: validity.get(k) for k in ("position_consistency", "first_position_rate")
    }
    found["first_position_rate_n"] = validity.get("first_position_rate_n")
    want = {
        "position_consistency": 1.0 if compared else None,
        "first_position_rate": 0.5 if decisive else None,
        "first_position_rate_n": 2 * decisive if compared else None,
    }
    if "pairwise" in plan.suites and plan.protocol != "aloe" and compared:
        assert found == want, f"position checks: witness {want}, results {found}"
    else:
        assert found["position_consistency"] is None, found
        assert found["first_position_rate"] is None, found
    for key in ("position_consistency", "first_position_rate"):
        if found[key] is None:
            assert validity["reasons"].get(key), f"{key} is null with no reason"


def counts_agree(plan: plans.Plan, document: dict) -> None:
    """The header's counts of unscored, error and missing rows."""
    rows = plans.expected_rows(plan)
    statuses = Counter(row["status"] for row in rows)
    counts = document["run"]["counts"]
    assert counts["unscored"] == statuses["unscored"]
    assert counts["errors"] == statuses["error"]
    assert counts["missing_rows"] == statuses["missing"]
    # the replies missing in the file (each gives a row in every suite)
    missing = {
        (r["session_id"], r["round"], r["method"])
        for r in rows
        if r["status"] == "missing"
    }
    assert counts["missing"] == len(missing)


def witness_document(plan: plans.Plan) -> dict:
    """The run as the witness knows it: the plan's file and judges, and the
    rows the plan implies (never the product's)."""
    judges = list(plan.judges)
    run = {
        "file": {"methods": list(plan.methods)},
        "suites": list(plan.suites),
        "judge": {"model": judges[0], "models": judges},
    }
    return {"run": run, "rows": plans.expected_rows(plan)}


def aggregates_agree(plan: plans.Plan, document: dict) -> None:
    """Every block of the results document equals the reference
    implementation's, computed from the plan's rows."""
    witness = witness_document(plan)
    found = [d for block in BLOCKS.values() for d in block(document, witness)]
    assert not found, "\n".join(
        f"{path}: witness {mine!r}, results {theirs!r}" for path, mine, theirs in found
    )


def downloads_agree(
    plan: plans.Plan, outcome: Outcome, files: dict[str, str], reports: list[str]
) -> None:
    """Every number of the exports and the CLI reports is the witness's
    (none of a run cancelled before it stored a result)."""
    if not reports:
        return
    witness = witness_document(as_stored(plan, outcome.document))
    found = published.export_differences(witness, outcome.document, files, *reports)
    assert not found, "\n".join(
        f"{where}: witness {mine!r}, file {theirs!r}" for where, mine, theirs in found
    )


def expected_missing_warnings(plan: plans.Plan) -> dict[str, tuple]:
    """Per method lacking replies, what ``replies_missing`` must say: its
    first line lacking one, the lines (sessions) lacking one (count and the
    first five), and the rounds lacking one of the file's rounds."""
    lacking: dict[str, list[int]] = {}
    missing: Counter = Counter()
    for item in plan.items:
        if item.answers is None:
            line = int(item.session[1:])  # session sN is line N
            lines = lacking.setdefault(item.method, [])
            if line not in lines:
                lines.append(line)
            missing[item.method] += 1
    slots = plan.sessions * plan.rounds
    return {
        method: (min(lines), len(lines), sorted(lines)[:5], missing[method], slots)
        for method, lines in lacking.items()
    }


def file_warnings_agree(plan: plans.Plan, path) -> None:
    """The file's validation warns of each method's missing replies with the
    lines that lack one (it once said ``lines: [null]``)."""
    warned = {
        w["path"]: (
            w["line"],
            w["count"],
            w["lines"],
            w["params"]["missing"],
            w["params"]["total"],
        )
        for w in validate_file(path).to_dict()["warnings"]
        if w["code"] == "replies_missing"
    }
    assert warned == expected_missing_warnings(plan)


def _shown(html: str, testid: str) -> str | None:
    """The text of the element ``data-testid`` names (tags dropped)."""
    found = re.search(rf'data-testid="{testid}"[^>]*>(.*?)</(?:dd|span|p)>', html, re.S)
    return None if found is None else re.sub(r"<[^>]+>|\s+", " ", found[1]).strip()


def page_agrees(plan: plans.Plan, outcome: Outcome, html: str) -> None:
    """The run page's header says what the witness knows: the requests the
    judges took apart from verdicts from the cache (none: each run is new),
    and not-applicable rows apart from the scores its protocol never asks
    (it once read "Judge calls 40 (cache hits 0)", and counted ALOE's
    dimensions as not applicable)."""
    taken = outcome.taken()
    sent = "1 request sent" if taken == 1 else f"{taken:,} requests sent"
    assert _shown(html, "judge-requests") == (
        f"{sent} · 0 verdicts from the cache (no request, no cost)"
    )
    rows = plans.expected_rows(as_stored(plan, outcome.document))
    lacks = sum(1 for row in rows if row.get("note_code") == "protocol_lacks")
    others = [r for r in outcome.document["rows"] if not witnessed(r["metric"])]
    inapplicable = sum(
        1
        for row in [*rows, *others]
        if row["status"] == "not_applicable"
        and row.get("note_code") != "protocol_lacks"
    )
    assert _shown(html, "count-not-applicable") == f"{inapplicable:,}"
    asked = _shown(html, "count-not-asked")
    assert (asked or "").startswith(f"{lacks:,} ") if lacks else asked is None


def grid_agrees(plan: plans.Plan, html: str) -> None:
    """The replies grid, in its default order ("as in the file"), lists each
    session's rounds with the methods in the file's order (they once came
    out alphabetical), and shows each reply's length once, under no judge
    and with no link to a judge's exchange (a panel showed it under each
    judge, linked to a page that said no exchange was kept)."""
    lines = re.findall(
        r'data-testid="grid-line" data-session="([^"]*)" data-round="(\d+)"'
        r' data-method="([^"]*)"',
        html,
    )
    assert lines, "the grid lists no reply"
    order = {method: place for place, method in enumerate(plan.methods)}
    for (session, round_), group in groupby(lines, key=lambda line: line[:2]):
        methods = [line[2] for line in group]
        assert methods == sorted(methods, key=order.__getitem__), (session, round_)
    lengths = re.findall(
        r'data-metric="response_chars" data-judge="([^"]*)">(.*?)</div>', html, re.S
    )
    assert len(lengths) == len(lines)
    assert all(judge == "" and "exchange-link" not in cell for judge, cell in lengths)


def reasons_shown(html: str) -> int:
    """Every value a comparison table shows as "—" for a reason says the
    reason where a phone shows it (it was a hovered title and a hidden
    span): in its cell, or, when every method's value of the column is
    missing for one reason, once under the table; and no n beside the
    dash. Returns how many dashes it saw."""
    seen = 0
    for table, after in re.findall(
        r'data-testid="comparison-table"(.*?)</table>(.*?)(?=<table|$)', html, re.S
    ):
        columns = [
            _text(h) for h in re.findall(r'<th scope="col"[^>]*>(.*?)</th>', table)
        ]
        shared = {
            _text(note).partition(" — for every method:")[0]
            for note in re.findall(r'data-testid="column-note">(.*?)</p>', after, re.S)
        }
        for row in re.findall(r"<tr[^>]*>(.*?)</tr>", table, re.S)[1:]:
            for place, cell in enumerate(re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)):
                if 'data-testid="value-note">—' not in cell:
                    continue
                seen += 1
                assert 'class="n"' not in cell, f"an n beside a dash: {cell[:200]}"
                reason = re.search(r'class="muted value-reason">([^<]+)<', cell)
                column = re.sub("[↑↓]", "", columns[place + 1]).strip()
                assert (reason and reason[1].strip()) or column in shared, (
                    f"a dash in {column!r} without its reason: {cell[:200]}"
                )
    return seen


def _text(fragment: str) -> str:
    return re.sub(r"<[^>]+>|\s+", " ", unescape(fragment)).strip()


def cancelled_page_agrees(plan: plans.Plan, outcome: Outcome, html: str) -> None:
    """A cancelled run's page says what it stored (sessions with rows of
    every suite, of some only) and what the requests before the cancel
    cost (it once read "0 of 30 sessions evaluated" after 60 paid
    requests)."""
    stored = as_stored(plan, outcome.document).stored or frozenset()
    suites_of: dict[str, set] = {}
    for session, suite in stored:
        suites_of.setdefault(session, set()).add(suite)
    complete = sum(1 for found in suites_of.values() if found >= set(plan.suites))
    partial, total = len(suites_of) - complete, plan.sessions
    cover = _shown(html, "cancelled-cover") or ""
    if not suites_of:
        assert f"(0 of {total} sessions)" in cover, cover
    elif partial:
        assert f"{complete} of {total} sessions complete, {partial} partly" in cover, (
            cover
        )
    else:
        assert f"in {complete} of {total} sessions." in cover, cover
    taken = outcome.taken()
    sent = "1 request sent" if taken == 1 else f"{taken:,} requests sent"
    cost = sum(
        (
            outcome.reported.get(judge, Counter())["prompt_tokens"] * PRICES[judge][0]
            + outcome.reported.get(judge, Counter())["completion_tokens"]
            * PRICES[judge][1]
        )
        / 1e6
        for judge in plan.judges
    )
    spent = _shown(html, "cancelled-spent") or ""
    want = f"Before the cancel: {sent}, which cost US$ {cost:,.4f};"
    assert spent.startswith(want), f"page: {spent!r}; witness: {want!r}"


def workspace_agrees(plan: plans.Plan, outcome: Outcome, html: str) -> int:
    """The run's line in its workspace: the judge requests it sent (a run
    served from the cache once showed a bare "0"), and each lead value
    with the sessions behind it, the witness's n (a value once stood
    alone), or, without a value, its reason. Returns the values seen."""
    line = re.search(
        rf'<tr data-testid="workspace-run">((?:(?!</tr>).)*?/r/{outcome.token}".*?)</tr>',
        html,
        re.S,
    )
    assert line, "the run is not in its workspace"
    spent = _text(re.search(r'data-testid="run-spent">(.*?)</td>', line[1], re.S)[1])
    taken = outcome.taken()
    sent = "1 request sent" if taken == 1 else f"{taken:,} requests sent"
    assert spent.startswith(sent), f"workspace: {spent!r}, the judges took {taken}"
    summary = ref.summary(witness_document(as_stored(plan, outcome.document)))
    seen = 0
    for metric, cell in re.findall(
        r'data-testid="lead-cell" data-metric="([^"]+)">(.*?)</td>', line[1], re.S
    ):
        for method, shown in re.findall(
            r'<span class="lead-line[^"]*"><span class="muted small">([^<]+)</span>'
            r"(.*?)</span>(?=<span class=\"lead-line|$)",
            cell,
            re.S,
        ):
            n = re.search(r'class="n">n=([\d,]+)<', shown)
            if "—" in shown:
                assert 'data-testid="lead-reason">' in shown, (metric, method, shown)
                continue
            seen += 1
            want = (summary.get(method) or {}).get(f"{metric}_n")
            assert n and int(n[1].replace(",", "")) == want, (metric, method, shown)
    return seen


def estimate_agrees(plan: plans.Plan, said: dict, history: list[Outcome]) -> None:
    """What ``POST /api/v1/validate`` says of the plan's file (sent after
    its run, into the same workspace, whose runs so far are ``history``, this
    one last): the calls a run makes, items x the
    modes its protocol asks x judges and every ordered pair in the pairwise
    suite (docs/api.md; the re-asks no estimate can know), and per judge the
    history its expected cost reads: the workspace's finished runs of the
    same judge and protocol that sent it requests (docs/judge.md), their
    completion tokens per request; none: no expected cost, said so."""
    calls = plans.expected_calls(plan)
    made = sum(c["calls"] - c["reasks"] for c in calls.values())
    assert said["estimate"] == made, f"estimate {said['estimate']}, the plan {made}"
    for judge in plan.judges:
        earlier = [
            o
            for o in history
            if o.protocol == plan.protocol
            and o.document["run"]["status"] in ("done", "partial")
            and _requests(o, judge) > 0
        ]
        found = said["judges"][judge]
        assert found["earlier_runs"] == len(earlier), (judge, found, len(earlier))
        if not earlier:
            assert found["cost_usd"] is None and found["cost_note"] == "no_earlier_run"
            continue
        # (a judge that only failed reported no tokens: absent from reported)
        tokens = sum(_reported(o, judge)["completion_tokens"] for o in earlier)
        per_call = tokens / sum(_requests(o, judge) for o in earlier)
        assert math.isclose(found["completion_per_call"], per_call, rel_tol=1e-9), (
            judge,
            found["completion_per_call"],
            per_call,
        )
        assert found["cost_usd"] is not None, found
        _cache_shares_agree(judge, found, earlier)


def _reported(outcome: Outcome, judge: str) -> Counter:
    return outcome.reported.get(judge, Counter())


def _requests(outcome: Outcome, judge: str) -> int:
    """Requests a judge took of a run: online as the judge counted them, and
    its lines of batch files (usage_agrees checks their sum over judges)."""
    usage = outcome.document["judge_usage"].get(judge, {})
    return outcome.asked[judge] + usage.get("batch_calls", 0)


def _share(parts: list[tuple[int, int]]) -> float:
    prompt = sum(p for p, _ in parts)
    return sum(c for _, c in parts) / prompt if prompt else 0.0


def _cache_shares_agree(judge: str, found: dict, earlier: list[Outcome]) -> None:
    """The prompt-cache share a forecast counts, per way of sending: the
    online runs' share (as the judge reported it) for an online forecast,
    the batch files' share of the runs that sent some for a batch one, 0
    without such a run (an online run's cache says nothing of a batch's:
    docs/judge.md)."""
    usage = [o.document["judge_usage"][judge] for o in earlier]
    online = [o for o, u in zip(earlier, usage, strict=True) if not u["batch_calls"]]
    batched = [u for u in usage if u["batch_calls"]]
    assert (found["cached_runs"], found["batch_runs"]) == (len(online), len(batched))
    reported = [
        (_reported(o, judge)["prompt_tokens"], _reported(o, judge)["cached_tokens"])
        for o in online
    ]
    said = [(u["batch_prompt_tokens"], u["batch_cached_tokens"]) for u in batched]
    for name, want in (
        ("cached_share", _share(reported)),
        ("batch_cached_share", _share(said)),
    ):
        assert math.isclose(found[name], want, rel_tol=1e-9, abs_tol=1e-12), (
            f"{judge} {name}: validate {found[name]}, the witness {want}"
        )
