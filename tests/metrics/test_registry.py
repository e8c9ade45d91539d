"""The registry contract: walks every suite, then runs every suite on
``sample_data.jsonl`` and checks what it emits against what it declares."""

from __future__ import annotations

import ast
import math
import re
from collections import Counter
from functools import cache
from pathlib import Path

import pytest
from babel.messages.pofile import read_po

import dataset
from metrics import counts, protocols, registry
from metrics.judging import JudgeItem, prompt_file
from metrics.rows import scored
from tests.fake_judge import FakeJudge

ROOT = Path(__file__).resolve().parents[2]
SUITES = registry.suites()
LEVELS = {"row", "session", "summary"}
SOURCES = re.compile(r"^(summary|panel|curves\.\w+|panel\.\w+)$")


@cache
def catalog(lang: str) -> dict[str, str]:
    path = ROOT / "locales" / lang / "LC_MESSAGES" / "messages.po"
    with path.open("rb") as po:
        return {m.id: m.string for m in read_po(po) if m.id}


def assert_translated(label, what: str) -> None:
    assert label is not None and label.msgid.strip(), f"{what} has no English label"
    for lang in ("zh", "ko"):
        assert catalog(lang).get(label.msgid), f"{what}: no {lang} label"


@pytest.mark.parametrize("suite", SUITES, ids=lambda s: s.name)
def test_suite_declares_everything_it_needs(suite):
    assert re.fullmatch(r"[a-z][a-z0-9_]*", suite.name)
    assert_translated(suite.label, f"suite {suite.name}")
    assert_translated(suite.description, f"suite {suite.name} description")
    if any(metric.needs_judge for metric in suite.metrics):
        assert suite.uses_judge
    if suite.uses_judge:
        assert suite.modes, "a judge suite names its prompt files and parsers"
    for mode in suite.modes:
        # a protocol's mode carries its prompt; any other names its file
        assert mode.template is not None or prompt_file(mode.prompt) is not None
        assert callable(mode.parse)
        item = JudgeItem(mode, ())
        assert item.read("no verdict here")[0] is None
    for option in suite.options:
        assert_translated(option.label, f"option {option.name}")
        option.validate(None)  # the default is valid


@pytest.mark.parametrize("suite", SUITES, ids=lambda s: s.name)
def test_every_metric_is_well_formed(suite):
    ids = {m.id for m in suite.metrics}
    assert len(ids) == len(suite.metrics)
    for metric in suite.metrics:
        assert metric.level in LEVELS and metric.suite == suite.name
        assert_translated(metric.label, f"metric {metric.id}")
        if metric.description is not None:
            assert_translated(metric.description, f"metric {metric.id} description")
        if metric.bounds is not None:
            low, high = metric.bounds
            assert low is None or high is None or low < high, metric.id
        if metric.compare is not None:
            assert metric.compare in ids, f"{metric.id} compares on an unknown metric"
        if metric.level == "summary":
            source = suite.source_of(metric)
            assert source in ids, f"{metric.id}: no metric its <id>_n counts"
            if metric.basis is not None:
                assert_translated(metric.basis, f"metric {metric.id} basis")
        if metric.agreement is not None:  # judge agreement compares judged items
            assert metric.needs_judge and metric.level != "summary", metric.id


@pytest.mark.parametrize("suite", SUITES, ids=lambda s: s.name)
def test_every_summary_value_has_its_session_count(suite):
    rows, summary = sample_results()[suite.name]
    counted = {m: dict(values) for m, values in summary["summary"].items()}
    counts.add_counts(counted, suite, rows)
    for method, values in counted.items():
        for metric_id, value in values.items():
            if counts.is_count(metric_id):
                assert isinstance(value, int) and value >= 0, (method, metric_id)
            else:
                assert counts.count_key(metric_id) in values, (method, metric_id)


@pytest.mark.parametrize("suite", SUITES, ids=lambda s: s.name)
def test_panels_point_at_real_data(suite):
    for chart in suite.panel.charts:
        assert SOURCES.match(chart.source), chart.id
        for _key, label_id in chart.series:
            assert registry.spec(label_id) is not None, f"{chart.id}: {label_id}"
        if chart.y_metric:
            assert registry.spec(chart.y_metric) is not None
    assert_translated_all = [c.title for c in suite.panel.charts]
    assert_translated_all += [t.title for t in suite.panel.tables]
    for title in assert_translated_all:
        assert_translated(title, f"a {suite.name} panel title")


@cache
def sample_results() -> dict:
    """Every suite on the sample file, through a judge that answers all prompts."""
    sessions = list(dataset.iter_sessions(ROOT / "sample_data.jsonl"))
    report = dataset.validate_file(ROOT / "sample_data.jsonl", suites=SUITES)
    results = {}
    for suite in SUITES:
        given, options = sessions, {"samples": 1}
        if suite.name == "checks":  # asked with a protocol that declares checks
            options["protocol"] = protocols.builtin("prefeval").stored()
            given = [{**s, "meta": {"reference": s["user_profile"]}} for s in sessions]
        rows = suite.run(given, report.methods, FakeJudge(), options)
        results[suite.name] = (rows, suite.summarize(rows, report.methods))
    return results


@pytest.mark.parametrize("suite", SUITES, ids=lambda s: s.name)
def test_every_emitted_metric_is_registered_labelled_and_within_bounds(suite):
    rows, summary = sample_results()[suite.name]
    assert rows, "the sample file exercises every suite"
    emitted = {row["metric"]: [] for row in rows}
    for row in filter(scored, rows):
        emitted[row["metric"]].append(row["value"])
    for values in summary["summary"].values():
        for metric_id, value in values.items():
            emitted.setdefault(metric_id, [])
            if value is not None:
                emitted[metric_id].append(value)
    for metric_id, values in emitted.items():
        metric = registry.spec(metric_id)
        assert metric is not None, f"{metric_id} is not registered"
        assert metric.suite == suite.name, f"{metric_id} belongs to {metric.suite}"
        assert_translated(metric.label, f"metric {metric_id}")
        for value in values:
            assert math.isfinite(value) and metric.within_bounds(value), (
                f"{metric_id} = {value} outside {metric.bounds}"
            )
    for metric_id in summary.get("session_values", {}):
        assert registry.spec(metric_id) is not None, metric_id


JUDGE_SUITES = [suite for suite in SUITES if suite.uses_judge]


@pytest.mark.parametrize("suite", JUDGE_SUITES, ids=lambda s: s.name)
def test_the_scripted_judge_scores_every_judge_suite_through_its_modes(suite):
    """The scripted judge answers each mode in the form it declares
    (``testing/judge_forms.py``): a judge suite whose judged rows are all
    unscored asks for a form its own parser cannot read back."""
    rows, _ = sample_results()[suite.name]
    judged = {m.id for m in suite.metrics if m.needs_judge and m.level != "summary"}
    statuses = Counter(
        row["status"] for row in rows if row["metric"].split("@")[0] in judged
    )  # (pairwise@<baseline>: a metric per baseline)
    assert statuses["ok"] > 0, f"{suite.name}: {dict(statuses)}"


# Field names of the input format that happen to equal a suite name (the
# protocol modes a suite asks are declared by the suite: protocol_checks.py
# names none). frontend/ builds plotly.js (its
# node_modules are third-party code).
INPUT_FIELDS = {
    ("dataset/schema.py", "slots"),
    # OpenAPI's own keyword for how a parameter is serialized ("style":
    # "form"), not the style suite
    ("web/views/openapi.py", "style"),
}
PRODUCT = [
    p
    for p in ROOT.rglob("*")
    if p.is_file()
    and p.suffix in {".py", ".html", ".js"}
    and not p.relative_to(ROOT)
    .parts[0]
    .startswith((".", "tests", "testing", "docs", "bench", "nltk_data", "frontend"))
    and p.relative_to(ROOT).parts[:2] != ("metrics", "suites")
]


def test_no_suite_name_is_spelled_outside_its_module():
    names = set(registry.names())
    found = []
    for path in PRODUCT:
        rel = path.relative_to(ROOT).as_posix()
        if path.suffix == ".py":
            literals = [
                node.value
                for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                if isinstance(node, ast.Constant) and node.value in names
            ]
        else:
            text = path.read_text(encoding="utf-8")
            literals = [n for n in names if re.search(rf"[\"']{n}[\"']", text)]
        found += [(rel, name) for name in literals if (rel, name) not in INPUT_FIELDS]
    assert found == []


@pytest.mark.parametrize("suite", registry.suites(), ids=lambda s: s.name)
def test_a_suite_s_lead_is_one_of_its_summary_metrics(suite):
    """The run list shows it (web/presentation/run_list.py): a ``lead``
    naming no summary metric of the suite would silently show its first."""
    summaries = [m.id for m in suite.summary_metrics()]
    assert summaries, "a suite summarizes"
    assert suite.lead in ("", *summaries)
    assert suite.lead_metric.id == (suite.lead or summaries[0])
