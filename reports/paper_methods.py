"""The "Methods" paragraph of a run, in English, ready to paste into a paper.

It states what a reader needs to reproduce the numbers: the data file
(SHA-256, sessions, rounds, methods), the platform version, the suites and
their options, the judge (model, temperature, samples, history window and
every prompt version with the SHA-256 of its file in its suite's folder), and
the statistics (``metrics/stats.py``). It is deterministic: the only moment
it names is the run's ``finished_at``.

>>> from types import SimpleNamespace
>>> run = SimpleNamespace(id="0123456789abcdef0123", sessions=2, rounds=6,
...     methods=["Base", "Ours"], suites=["quality"], judge=None, options={},
...     file_sha256="ab" * 32, finished_at=None, aggregates={"comparisons": []})
>>> text = methods_paragraph(run)
>>> text.startswith("We evaluated 2 methods (Base, Ours) on 2 sessions")
True
>>> "No metric of these suites uses an LLM judge." in text
True
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from config import PROJECT_ROOT
from core.status import RunStatus
from metrics import basis, registry
from metrics.judging import prompt_file
from metrics.results import missing_replies, not_asked
from reports import ReportedRun, paper_card, paper_panel
from reports.paper_spent import plural, spent_sentence
from reports.paper_text import bootstrap_text


@lru_cache
def platform_version() -> str:
    """``[project] version`` of this installation's ``pyproject.toml``.

    >>> platform_version().count(".") >= 1
    True
    """
    with (PROJECT_ROOT / "pyproject.toml").open("rb") as stream:
        return str(tomllib.load(stream)["project"]["version"])


def prompt_sha256(version: str) -> str | None:
    """SHA-256 of the prompt file of ``version`` (in its suite's folder,
    ``metrics.judging.prompt_file``); None when this installation has
    no such file (a version is never edited: a new one is a new file).

    >>> len(prompt_sha256("jera_v1")), prompt_sha256("../pyproject")
    (64, None)
    """
    path = prompt_file(version)
    return None if path is None else hashlib.sha256(path.read_bytes()).hexdigest()


def data_sentence(run: ReportedRun) -> str:
    methods = ", ".join(run.methods)
    # a cancelled run evaluated part of the file (cancelled_sentence)
    verb = "We began to evaluate" if run_cancelled(run) else "We evaluated"
    return (
        f"{verb} {plural(len(run.methods), 'method')} ({methods}) on "
        f"{plural(run.sessions, 'session')} with {plural(run.rounds, 'round')} in "
        f"total (data file SHA-256 {run.file_sha256}) using PersonaSteer Benchmark "
        f"{platform_version()} with the suites {suites_text(run)}."
    )


def run_cancelled(run: ReportedRun) -> bool:
    return getattr(run, "status", None) == RunStatus.CANCELLED


def cancelled_sentence(run: ReportedRun) -> str:
    """What a cancelled run's results cover, from its stored rows
    (``pipeline/worker/interim.cancel_cover``): the numbers below are of these.

    >>> from types import SimpleNamespace
    >>> cover = {"responses": 90, "of_responses": 492, "complete": 6,
    ...          "partial": 2, "of_sessions": 30}
    >>> print(cancelled_sentence(SimpleNamespace(status="cancelled",
    ...     aggregates={"cancel_cover": cover})))
    The run was cancelled before it finished: results were stored for 90 of the 492 responses, in 6 of the 30 sessions for every suite and 2 more for some suites only; every number below is of these alone.
    """
    if not run_cancelled(run):
        return ""
    cover = (run.aggregates or {}).get("cancel_cover")
    if cover is None:  # not summarized yet, or by an earlier release
        return "The run was cancelled before it finished."
    if not cover["complete"] + cover["partial"]:
        return "The run was cancelled before it finished, before any result was stored."
    responses = ""
    if cover.get("responses") is not None:
        responses = (
            f" for {cover['responses']:,} of the "
            f"{plural(cover['of_responses'], 'response')},"
        )
    partly = (
        f" and {cover['partial']:,} more for some suites only"
        if cover["partial"]
        else ""
    )
    return (
        f"The run was cancelled before it finished: results were stored{responses} "
        f"in {cover['complete']:,} of the {plural(cover['of_sessions'], 'session')} "
        f"for every suite{partly}; every number below is of these alone."
    )


def suites_text(run: ReportedRun) -> str:
    known = set(registry.names())
    return "; ".join(
        f"{registry.get(name).label.msgid} ({name}{options_text(run, name)})"
        if name in known
        else name
        for name in run.suites
    )


def options_text(run: ReportedRun, suite: str) -> str:
    """The suite options the run set, as ``, name = JSON``."""
    stored = run.options or {}
    return "".join(
        f", {option.name} = {json.dumps(stored[option.name], sort_keys=True)}"
        for option in registry.get(suite).options
        if stored.get(option.name) is not None
    )


def judge_sentence(run: ReportedRun) -> str:
    judged = [name for name in run.suites if _uses_judge(name)]
    if not judged:
        return "No metric of these suites uses an LLM judge."
    if not run.judge:
        return (
            f"No LLM judge was configured for this run, so the judge-based "
            f"metrics of {', '.join(judged)} were not scored and are not reported."
        )
    judge = run.judge
    models = judge.get("models") or judge.get("model")  # a panel names every judge
    models = ", ".join(models) if isinstance(models, list) else str(models)
    window = judge.get("history_chars")
    if window is None:
        history = "the full dialogue history"
    elif window == 0:
        history = "no dialogue history"
    else:
        history = f"at most the last {window:,} characters of dialogue history"
    settings = [
        f"temperature {judge['temperature']}"
        if judge.get("temperature") is not None
        else "",
        f"{plural(judge['samples'], 'sample')} per item"
        if judge.get("samples")
        else "",
        f"showing it {history}",
    ]
    who = "panel of LLM judges" if paper_panel.panel_judges(run) else "LLM judge"
    panel = paper_panel.sentence(run)
    return (
        f"Judge-based metrics ({', '.join(judged)}) were scored by the {who} "
        f"{models} ({', '.join(s for s in settings if s)}){protocol_text(judge)}; "
        f"prompts: {prompts_text(judge.get('prompts') or {})}."
        + (f" {panel}" if panel else "")
    )


def recorded_sentence(run: ReportedRun) -> str:
    """Recorded judges (verdicts carried by the file, ``judges``): named, and
    said to be neither called nor human labels.

    >>> class Run: aggregates = {"judge_validity": {"recorded_judges": ["J/a", "J/b"]}}
    >>> recorded_sentence(Run())
    'Verdicts recorded in the file from 2 judges (J/a, J/b) were read as they are (no call, no cost) and compared with the human scores of the same criterion and scale; they are not human labels.'
    """
    validity = (getattr(run, "aggregates", None) or {}).get("judge_validity") or {}
    names = validity.get("recorded_judges") or []
    if not names:
        return ""
    return (
        f"Verdicts recorded in the file from {plural(len(names), 'judge')} "
        f"({', '.join(names)}) were read as they are (no call, no cost) and "
        "compared with the human scores of the same criterion and scale; "
        "they are not human labels."
    )


def criterion_agreement_sentence(run: ReportedRun) -> str:
    """How the agreement with human scores per criterion was measured, when
    the run has any (``judge_validity.human.<judge>.scores``).

    >>> class Run: aggregates = {"judge_validity": {"human": {"j": {"scores": {
    ...     "e:1-5": {"weighted_kappa": 0.5, "alpha_with": {"k": {}}}}}}}}
    >>> print(criterion_agreement_sentence(Run()))
    Agreement with the human scores was measured per criterion on the criterion's own scale: Pearson r, Spearman rho and Kendall tau-b with 95% Fisher-z intervals, quadratic-weighted Cohen's kappa where both raters are on the scale's points (95% percentile bootstrap interval over items, 2000 resamples, fixed seed), and Krippendorff's alpha between each recorded judge and each judge of the run on the same items (ordinal on the scale's points, else interval).
    """
    validity = (getattr(run, "aggregates", None) or {}).get("judge_validity") or {}
    scores = [
        found
        for entry in (validity.get("human") or {}).values()
        for found in (entry.get("scores") or {}).values()
    ]
    if not scores:
        return ""
    said = (
        "Agreement with the human scores was measured per criterion on the "
        "criterion's own scale: Pearson r, Spearman rho and Kendall tau-b with "
        "95% Fisher-z intervals"
    )
    if any("weighted_kappa" in found for found in scores):
        said += (
            ", quadratic-weighted Cohen's kappa where both raters are on the "
            "scale's points (95% percentile bootstrap interval over items, 2000 "
            "resamples, fixed seed)"
        )
    if any(found.get("alpha_with") for found in scores):
        said += (
            ", and Krippendorff's alpha between each recorded judge and each "
            "judge of the run on the same items (ordinal on the scale's points, "
            "else interval)"
        )
    return said + "."


def protocol_text(judge: dict[str, Any]) -> str:
    """following the judge protocol … (file, version, SHA-256)."""
    protocol = judge.get("protocol")
    if not protocol:
        return ""
    return (
        f" following the judge protocol {protocol['title']} "
        f"(protocols/{protocol['name']}.toml, version {protocol['version']}, "
        f"SHA-256 {protocol['sha256']}; its replies read by the verdict grammar "
        "of docs/judge-replies.md)"
    )


def _uses_judge(name: str) -> bool:
    return name in registry.names() and registry.get(name).uses_judge


def prompts_text(prompts: dict[str, Any]) -> str:
    """Every prompt version with the SHA-256 of its file."""
    parts = []
    for mode, version in sorted(prompts.items()):
        if "@" in version:  # a protocol's mode: the protocol's digest says it
            parts.append(f"{mode}: {version}")
            continue
        digest, path = prompt_sha256(version), prompt_file(version)
        found = f"SHA-256 {digest}" if digest else "file not in this installation"
        shown = path.relative_to(PROJECT_ROOT).as_posix() if path else f"{version}.txt"
        parts.append(f"{mode}: {shown} ({found})")
    return "; ".join(parts) or "none recorded"


def statistics_sentence(run: ReportedRun, holm_family: str = "metric") -> str:
    comparisons = (run.aggregates or {}).get("comparisons") or []
    text = (
        "Summary values are per-method means unless the metric names another statistic."
    )
    if len(run.methods) < 2 or not comparisons:
        return text + " No paired comparisons were computed."
    family = all("family" in c for c in comparisons)
    holm = "within each metric" if family else "across all comparisons of the run"
    text += (
        f" For {pairs_text(run, comparisons)}, each session-level metric was "
        "compared over the sessions both methods scored: mean paired difference "
        "with a 95% percentile paired bootstrap confidence interval "
        f"({bootstrap_text([c.get('n') or 0 for c in comparisons])}), "
        "two-sided Wilcoxon signed-rank test (zero differences ranked, then set "
        "aside: Pratt 1959; exact up to 200 nonzero differences) and "
        "Cohen's dz (mean difference over the standard deviation of the "
        f"differences); p-values were Holm-adjusted {holm}. In the comparison "
        "tables, each difference from the baseline (Δ) is the difference of the "
        "two values shown, on the value's own basis (e.g. a pooled rate or a "
        "mean over rounds); its 95% interval resamples the sessions and "
        "recomputes both values, and its significance marks come from a "
        "two-sided paired permutation test on the same basis (each session's "
        "data of the two methods kept or swapped, both values recomputed; "
        f"every assignment up to {basis.PERMUTATION_EXACT_UP_TO} sessions, "
        f"else {basis.PERMUTATION_DRAWS:,} seeded random assignments, "
        "p = (b + 1)/(m + 1)), Holm-adjusted "
        + (
            "across every comparison of a table."
            if holm_family == "table"
            else "within each table column."
        )
    )
    for suite in (
        registry.get(name) for name in run.suites if name in registry.names()
    ):
        if suite.methods_note:
            text += " " + suite.methods_note
    return text


def pairs_text(run: ReportedRun, comparisons: list[dict[str, Any]]) -> str:
    pairs = {frozenset((c["a"], c["b"])) for c in comparisons}
    every = len(run.methods) * (len(run.methods) - 1) // 2
    if len(pairs) >= every:
        return "every pair of methods"
    return f"each method paired with {run.methods[0]}"


def iso_utc(moment: datetime | None) -> str | None:
    """ISO 8601 in UTC (SQLite hands back naive datetimes stored as UTC).

    >>> from datetime import datetime
    >>> iso_utc(datetime(2025, 5, 1, 12, 30)), iso_utc(None)
    ('2025-05-01T12:30:00Z', None)
    """
    if moment is None:
        return None
    aware = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return (
        aware.astimezone(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    )


def outcome_sentence(run: ReportedRun) -> str:
    """How many result rows were scored and why the others were not: a
    reader must know what the means leave out.

    >>> from types import SimpleNamespace
    >>> print(outcome_sentence(SimpleNamespace(aggregates={"status_counts": {
    ...     "ok": 1200, "unscored": 3, "not_applicable": 40, "error": 0}})))
    Of 1,243 result rows, 1,200 were scored; 3 unscored (the judge or the metric could not score the item), 40 not applicable (the metric does not apply to the item) and 0 failed with an error are excluded from every aggregate (no value is imputed).
    """
    counts = (run.aggregates or {}).get("status_counts") or {}
    if not counts:
        return ""
    total = sum(counts.values())
    configured = counts.get("not_configured", 0)
    missing = f", {configured:,} not configured (no judge)" if configured else ""
    asked = not_asked(run.aggregates)  # counted apart from "not applicable"
    applicable = counts.get("not_applicable", 0) - asked
    if asked:
        missing += (
            f", {asked:,} not asked by the judge protocol (scores it has no "
            "question for)"
        )
    if counts.get("missing"):
        replies = missing_replies(counts, run.suites)
        missing += (
            f", {counts['missing']:,} of the {replies:,} "
            f"repl{'y' if replies == 1 else 'ies'} missing in the file (null or "
            "absent; one row per suite; never scored)"
        )
    return (
        f"Of {plural(total, 'result row')}, {counts.get('ok', 0):,} were scored; "
        f"{counts.get('unscored', 0):,} unscored (the judge or the metric could "
        f"not score the item), {applicable:,} not applicable (the metric "
        f"does not apply to the item){missing} and {counts.get('error', 0):,} "
        "failed with an error are excluded from every aggregate (no value is "
        "imputed)."
    )


def methods_paragraph(
    run: ReportedRun, used: dict[str, Any] | None = None, holm: str = "metric"
) -> str:
    """The paragraph, one line of plain text; ``used`` is the run's
    ``judge_usage`` (metrics/results.py), said when given."""
    finished = iso_utc(run.finished_at)
    ended = "was cancelled" if run_cancelled(run) else "finished"
    when = f"The run ({run.id[:12]}) {ended} at {finished}." if finished else ""
    parts = [
        data_sentence(run),
        cancelled_sentence(run),
        judge_sentence(run),
        recorded_sentence(run),
        criterion_agreement_sentence(run),
        paper_card.sentence(run),
        spent_sentence(used),
        outcome_sentence(run),
        statistics_sentence(run, holm),
        when,
    ]
    return " ".join(part for part in parts if part)
