"""CONTRIBUTING.md, followed to the letter in a copy of the repository: a new
suite ("brevity", words per reply), a new judge suite ("politeness", one
folder with its prompt, scored end to end by the scripted judge, which is
not edited: ``tests/contributed_judge_suite.py``) and a new metric in an
existing suite (quality's "calmness"), then the guide's commands (``make messages``,
the catalogs filled and compiled, ``make reference``) and the tests that walk
the registry. Passes only if the files the guide names are the only ones
that changed and every one of those tests still passes."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests import contributed_judge_suite as politeness

# the drill runs the registry walk, two suites and an end-to-end judged run in
# a copy: beside four busy CPU loops it took longer than the default 300 s
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
GIT = ["git", "-c", "user.name=drill", "-c", "user.email=drill@localhost"]
# what the guide says a new suite and a new metric touch
EXPECTED = {
    "metrics/suites/brevity.py",
    "metrics/suites/politeness/__init__.py",
    "metrics/suites/politeness/prompts/politeness_v1.txt",
    "tests/metrics/suites/test_politeness.py",
    "docs/metrics/politeness.md",
    "tests/metrics/suites/test_brevity.py",
    "docs/metrics/brevity.md",
    "docs/metrics/README.md",
    "metrics/suites/quality/__init__.py",
    "tests/metrics/suites/test_quality.py",
    "docs/metrics/quality.md",
    "locales/messages.pot",
    "locales/zh/LC_MESSAGES/messages.po",
    "locales/ko/LC_MESSAGES/messages.po",
    "tests/data/aggregate_reference.json",
}
# the contract tests an addition can break: every package named, the copy
# of the tree lint-imports reads, no cycle (the others add an import to the
# pipeline or store in a copy: nothing the guide touches)
CONTRACT_TESTS = [
    f"tests/test_import_contracts.py::{name}"
    for name in (
        "test_every_package_of_the_product_is_a_root_package",
        "test_the_copied_tree_keeps_every_contract",
        "test_the_import_graph_has_no_cycle",
    )
]
# the tests that walk the registry, the catalogs, the contracts and the
# reference, and the two suites' own
DRILL_TESTS = [
    "tests/metrics/test_registry.py",
    "tests/test_translations.py",
    "tests/metrics/test_aggregate_equality.py",
    *CONTRACT_TESTS,
    "tests/test_import_contracts.py::test_a_suite_importing_another_breaks_a_contract",
    "tests/test_import_contracts.py::"
    "test_a_module_outside_metrics_importing_a_suite_breaks_a_contract",
    "tests/metrics/suites/test_quality.py",
    "tests/metrics/suites/test_brevity.py",
    "tests/metrics/suites/test_politeness.py",
    "tests/web/views/test_api.py::test_validate_endpoint_reports_suites",
    "metrics/suites/brevity.py",
    "metrics/suites/politeness/__init__.py",
    "metrics/suites/quality/__init__.py",
]

BREVITY = '''"""Brevity: words per reply (the contributor drill's suite)."""

from metrics.rows import result_row, session_summary
from metrics.suite import Chart, Metric, Panel, Suite, _l, series


def run(sessions, methods, judge, options):
    """Rows for one chunk of sessions.

    >>> session = {"session_id": "s", "rounds": [
    ...     {"round": 1, "responses": {"M": {"text": "two words"}}}]}
    >>> run([session], ["M"], None, {})[0]["value"]
    2.0
    """
    rows = []
    for session in sessions:
        for round_ in session["rounds"]:
            for method in methods:
                key = {
                    "session_id": session["session_id"],
                    "round": round_["round"],
                    "method": method,
                }
                text = round_["responses"][method]["text"]
                rows.append(result_row(key, "brevity_words", float(len(text.split()))))
    return rows


def summarize(rows, methods):
    found = session_summary(rows, ["brevity_words"], methods)
    return {"summary": found.summary, "session_values": found.values}


SUITE = Suite(
    name="brevity",
    label=_l("Brevity"),
    description=_l("How many words a method writes per reply."),
    metrics=(
        Metric("brevity_words", _l("Words per reply"), "row",
               higher_is_better=False, bounds=(0.0, None),
               description=_l("Whitespace-separated words in the response.")),
        Metric("brevity_words_avg", _l("Words per reply"), "summary", False,
               (0.0, None), compare="brevity_words"),
    ),
    run=run,
    summarize=summarize,
    panel=Panel(charts=(Chart("brevity_words", "bars", _l("Mean words per reply"),
                              "summary", series=series("brevity_words_avg")),)),
    order=90,
)
'''

TEST_BREVITY = """from metrics import registry
from metrics.suites import brevity
from tests import crafted


def test_one_row_per_metric_and_response():
    session = {"session_id": "s", "rounds": [
        {"round": 1, "responses": {"M": {"text": "a b c"}}}]}
    rows = brevity.run([session], ["M"], None, {})
    assert len(rows) == crafted.per_item("brevity")
    assert registry.get("brevity").summarize(rows, ["M"])["summary"] == {
        "M": {"brevity_words_avg": 3.0}}
"""

# "Adding a metric to an existing suite", written as an addition at the end
# of the module (so the drill does not depend on the module's layout): the
# metric declared, its rows emitted by run, and its mean over sessions added
# by summarize
QUALITY_METRIC = """

# -- calmness (the contributor drill's metric) ------------------------------
import dataclasses as _dataclasses  # noqa: E402

from metrics.rows import session_summary as _session_summary  # noqa: E402

_run, _summarize = run, summarize


def run(sessions, methods, judge, options):
    rows = _run(sessions, methods, judge, options)
    for session in sessions:
        for round_ in session["rounds"]:
            for method in methods:
                response = round_["responses"].get(method)
                if isinstance(response, dict) and response.get("text") is not None:
                    key = {"session_id": session["session_id"],
                           "round": round_["round"], "method": method}
                    calm = 1.0 / (1.0 + response["text"].count("!"))
                    rows.append(result_row(key, "calmness", calm))
    return rows


def summarize(rows, methods):
    found = _summarize(rows, methods)
    calmness = _session_summary(rows, ["calmness"], methods)
    for method in methods:
        found["summary"][method].update(calmness.summary[method])
    found["session_values"].update(calmness.values)
    return found


SUITE = _dataclasses.replace(
    SUITE,
    metrics=(*SUITE.metrics,
             Metric("calmness", _l("Calmness"), "row", True, (0.0, 1.0),
                    description=_l("One over one plus the exclamation marks.")),
             Metric("calmness_avg", _l("Calmness"), "summary", True, (0.0, 1.0),
                    compare="calmness")),
    run=run,
    summarize=summarize,
)
"""

TEST_QUALITY_METRIC = """

def test_calmness_counts_exclamation_marks():
    session = {"session_id": "s", "rounds": [{"round": 1, "user_message": "hi",
               "responses": {"M": {"text": "Hi! Yes!"}}}]}
    rows = quality.run([session], ["M"], None, {})
    assert [r["value"] for r in rows if r["metric"] == "calmness"] == [1 / 3]
    summary = quality.SUITE.summarize(rows, ["M"])["summary"]["M"]
    assert summary["calmness_avg"] == 1 / 3
"""


def run(tree: Path, *args: str, timeout: float = 1800) -> str:
    env = dict(os.environ)
    env.pop("PYTEST_XDIST_WORKER", None)  # the copy's tests pick their own Redis db
    # each step's Python compiles the copy's modules once and the next one
    # reads them (__pycache__ is ignored by git, so the changed files stay
    # the guide's)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    # Hypothesis's caches (Unicode tables, each module's constants by its
    # source's hash) are this checkout's: in a fresh copy its inner pytest
    # rebuilt them, ~2 s of CPU
    env.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", str(ROOT / ".hypothesis"))
    result = subprocess.run(
        list(args),
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert result.returncode == 0, (
        f"{args}\n{result.stdout[-4000:]}{result.stderr[-4000:]}"
    )
    return result.stdout


def copy_of_the_repository(tree: Path) -> None:
    """The tracked files as they are now, committed in a fresh repository;
    the installed environment and NLP data linked, not copied."""
    listed = (
        subprocess.run(
            ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
        )
        .stdout.decode()
        .split("\0")
    )
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (tree / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, tree / name)
    copy_bytecode(tree, {(tree / name).parent for name in listed if name})
    for linked in (".venv", "nltk_data"):
        if (ROOT / linked).exists():
            (tree / linked).symlink_to(ROOT / linked)
    run(tree, "git", "init", "-q")
    run(tree, "git", "add", "-A")
    run(tree, *GIT, "commit", "-q", "-m", "baseline")


def copy_bytecode(tree: Path, folders: set[Path]) -> None:
    """The modules this checkout compiled already (pytest's rewritten tests
    too), beside their copies: a .pyc names its source's mtime and size,
    which copy2 keeps, so an edited module is compiled again and the others
    are not (they were the copy's first compilation, seconds of CPU)."""
    for folder in folders:
        # (a pytest worker may be writing one: each is written aside and
        # renamed, and one gone meanwhile is simply compiled)
        for compiled in (ROOT / folder.relative_to(tree) / "__pycache__").glob("*.pyc"):
            (folder / "__pycache__").mkdir(exist_ok=True)
            with contextlib.suppress(OSError):
                shutil.copy2(compiled, folder / "__pycache__" / compiled.name)


def fill_catalogs(tree: Path) -> None:
    """Step 3: every new message gets a (marked) Chinese and Korean text,
    placeholders kept, through scripts/fill_catalog.py."""
    from babel.messages.pofile import read_po

    for lang, mark in (("zh", "译"), ("ko", "번역")):
        po = tree / "locales" / lang / "LC_MESSAGES" / "messages.po"
        with po.open("rb") as stream:
            empty = [m.id for m in read_po(stream) if m.id and not m.string]
        assert empty, f"make messages found no new message for {lang}"
        mapping = tree / f"{lang}.json"
        mapping.write_text(json.dumps({m: f"{mark} {m}" for m in empty}))
        run(tree, PYTHON, "scripts/fill_catalog.py", lang, str(mapping))
        mapping.unlink()


def write_docs(tree: Path) -> None:
    """Step 4: the cards."""
    (tree / "docs/metrics/brevity.md").write_text(
        "# brevity\n\n`brevity_words`: words per reply; `brevity_words_avg`.\n"
    )
    with (tree / "docs/metrics/README.md").open("a") as readme:
        readme.write(
            "\n| `brevity` | [brevity.md](brevity.md) | any valid file | "
            "`brevity_words` |\n"
        )
        readme.write(
            "| `politeness` | [politeness.md](politeness.md) | any valid "
            "file, a judge | `politeness` |\n"
        )
    (tree / "docs/metrics/politeness.md").write_text(
        "# politeness\n\n`politeness`: the judge's 1-5 rating of a reply.\n"
    )
    with (tree / "docs/metrics/quality.md").open("a") as card:
        card.write("\n## exclamations\n\nExclamation marks per response.\n")


def test_the_guide_adds_suites_and_a_metric_touching_only_what_it_names(tmp_path):
    tree = tmp_path / "repo"
    tree.mkdir()
    copy_of_the_repository(tree)
    (tree / "metrics/suites/brevity.py").write_text(BREVITY)
    (tree / "tests/metrics/suites/test_brevity.py").write_text(TEST_BREVITY)
    folder = tree / "metrics/suites/politeness"
    folder.mkdir()
    (folder / "__init__.py").write_text(politeness.POLITENESS)
    (folder / "prompts").mkdir()
    (folder / "prompts/politeness_v1.txt").write_text(politeness.PROMPT)
    (tree / "tests/metrics/suites/test_politeness.py").write_text(
        politeness.TEST_POLITENESS
    )
    with (tree / "metrics/suites/quality/__init__.py").open("a") as module:
        module.write(QUALITY_METRIC)
    with (tree / "tests/metrics/suites/test_quality.py").open("a") as tests:
        tests.write(TEST_QUALITY_METRIC)
    run(tree, "make", "messages")
    fill_catalogs(tree)
    run(tree, str(Path(PYTHON).with_name("pybabel")), "-q", "compile", "-d", "locales")
    write_docs(tree)
    run(tree, "make", "reference")

    changed = run(tree, "git", "status", "--porcelain", "--untracked-files=all")
    paths = {line[3:] for line in changed.splitlines()}
    assert paths == EXPECTED
    run_tests(tree, "-k", f"not ({untouched_suites()})", *DRILL_TESTS)


def run_tests(tree: Path, *args: str) -> None:
    """pytest in the copy, with the plugins the project's own options turn
    off (schemathesis, locust, anyio: a second of start-up) off too."""
    options = "--strict-markers --doctest-modules"
    plugins = ("-p", "no:schemathesis", "-p", "no:locust", "-p", "no:anyio")
    pytest_ = (PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider", *plugins)
    run(tree, *pytest_, "-o", f"addopts={options}", *args)


def untouched_suites() -> str:
    """A -k expression naming the registry tests' cases of the suites the
    drill leaves byte for byte as they are here (``[alignment]`` matches the
    id of that case only): this suite's own run checks them."""
    from metrics import registry

    return " or ".join(f"[{name}]" for name in registry.names() if name != "quality")


# "Adding an importer": a layout of {"who", "said": [[message, reply], ...]}
TOYCHAT = '''"""Toychat's chats (``docs/importers.md#toychat``)."""

from __future__ import annotations

from typing import Any

from dataset.importer import Importer
from dataset.turns import Options, Skipped, make_session, own_id


def toychat(record: dict[str, Any], number: int, options: Options) -> dict[str, Any]:
    said = record.get("said")
    if not isinstance(said, list) or not said:
        raise Skipped("nothing said")
    rounds = [
        {"round": k, "user_message": str(pair[0]), "responses": {options.method: pair[1]}}
        for k, pair in enumerate(said, start=1)
    ]
    return make_session(own_id(record.get("id")), record.get("who"), options, rounds)


def looks_like(record: dict[str, Any]) -> bool:
    return "who" in record and isinstance(record.get("said"), list)


IMPORTER = Importer("toychat", toychat, looks_like, "toychat", "Toychat")
'''
TEST_TOYCHAT = """import json

from dataset.convert import detect_head
from dataset.importers import IMPORTERS, Options, convert_record

RECORD = {"id": "t1", "who": "A nurse", "said": [["Hi", "Hello"], ["Bye", None]]}


def test_a_record_converts_and_its_layout_is_detected():
    session = convert_record("toychat", RECORD, 1, Options(method="M"))
    assert session["user_profile"] == "A nurse"
    assert [r["responses"]["M"] for r in session["rounds"]] == ["Hello", None]
    assert detect_head(json.dumps([RECORD]).encode(), ".json") == "toychat"
    assert IMPORTERS["toychat"].title == "Toychat"


def test_the_cli_and_the_api_offer_it(app_factory):
    app = app_factory()
    helped = app.test_cli_runner().invoke(args=["convert", "--help"])
    assert "toychat" in helped.output
    document = app.test_client().get("/api/v1/openapi.json").get_json()
    form = document["components"]["schemas"]["ConvertForm"]
    assert "toychat" in form["properties"]["from"]["enum"]
"""
# what the guide says a new importer touches
IMPORTER_EXPECTED = {
    "dataset/importers/toychat.py",
    "tests/dataset/importers/test_toychat.py",
    "docs/importers.md",
}


def test_the_guide_adds_an_importer_touching_only_what_it_names(tmp_path):
    """CONTRIBUTING's "Adding an importer" in a copy: the importer's module,
    its test and its doc, and it is offered by the CLI, the API and the
    upload page (the registry-walking importer tests run in the copy)."""
    tree = tmp_path / "repo"
    tree.mkdir()
    copy_of_the_repository(tree)
    (tree / "dataset/importers/toychat.py").write_text(TOYCHAT)
    (tree / "tests/dataset/importers").mkdir(parents=True, exist_ok=True)
    (tree / "tests/dataset/importers/test_toychat.py").write_text(TEST_TOYCHAT)
    with (tree / "docs/importers.md").open("a") as doc:
        doc.write("\n## `toychat`\n\n`who` is the profile; `said` the rounds.\n")

    changed = run(tree, "git", "status", "--porcelain", "--untracked-files=all")
    assert {line[3:] for line in changed.splitlines()} == IMPORTER_EXPECTED
    run_tests(
        tree,
        "tests/dataset/importers/test_toychat.py",
        "tests/dataset/test_importers.py",
        *CONTRACT_TESTS,
        "dataset/importers",
    )
