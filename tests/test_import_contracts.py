"""The import contracts (``.importlinter``) cover every module: a package
not named as a root, a pipeline module placed in no layer, or a suite that
imports another breaks ``lint-imports``. Each case is added to a copy of the
source tree, never to this one."""

from __future__ import annotations

import configparser
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def root_packages() -> list[str]:
    config = configparser.ConfigParser()
    config.read(ROOT / ".importlinter")
    return config["importlinter"]["root_packages"].split()


def test_every_package_of_the_product_is_a_root_package():
    packages = {
        path.parent.name
        for path in ROOT.glob("*/__init__.py")
        if path.parent.name != "tests"
    }
    # bench/, testing/ and tests/ are not product code: they may import anything
    assert packages - {"bench", "testing"} == set(root_packages())


@pytest.fixture
def tree(tmp_path):
    """A copy of the product packages and the contracts."""
    for name in root_packages():
        shutil.copytree(
            ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__")
        )
    shutil.copy(ROOT / ".importlinter", tmp_path)
    return tmp_path


def lint_imports(tree: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"],
        cwd=tree,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_the_copied_tree_keeps_every_contract(tree):
    result = lint_imports(tree)
    assert result.returncode == 0, result.stdout


@pytest.mark.parametrize("side", ["", "service", "worker", "batch"])
def test_a_pipeline_module_in_no_layer_breaks_a_contract(tree, side):
    """At the pipeline's root (what both sides share) and on each side."""
    folder = tree / "pipeline" / side
    (folder / "unplaced.py").write_text('"""New."""\n')
    result = lint_imports(tree)
    assert result.returncode != 0
    assert ".".join(filter(None, ["pipeline", side, "unplaced"])) in result.stdout
    assert "not listed as layers" in result.stdout


@pytest.mark.parametrize(
    ("module", "imported", "contract"),
    [
        (
            "service/runs.py",
            "pipeline.worker.tasks",
            "The pipeline by side: the worker on batch mode, on the run service",
        ),
        (
            "service/run_spec.py",
            "celery",
            "The run service sends tasks by name",
        ),
        (
            "dispatch.py",
            "pipeline.service.runs",
            "The pipeline by side: the worker on batch mode, on the run service",
        ),
    ],
)
def test_the_service_never_imports_the_worker_nor_the_shared_modules_a_side(
    tree, module, imported, contract
):
    """The service sends tasks by name, and what both sides share is below
    both: an import the other way breaks a named contract."""
    with (tree / "pipeline" / module).open("a") as source:
        source.write(f"\nimport {imported}  # noqa: E402, F401\n")
    result = lint_imports(tree)
    assert result.returncode != 0
    assert contract in " ".join(result.stdout.split()), result.stdout


def test_a_suite_importing_another_breaks_a_contract(tree):
    (tree / "metrics" / "suites" / "brevity.py").write_text(
        '"""A new suite borrowing from another."""\n'
        "from metrics.suites import style  # noqa: F401\n"
    )
    result = lint_imports(tree)
    assert result.returncode != 0
    assert "Suites do not import each other BROKEN" in result.stdout
    assert "metrics.suites.brevity -> metrics.suites.style" in result.stdout


def test_a_module_outside_metrics_importing_a_suite_breaks_a_contract(tree):
    with (tree / "pipeline" / "service" / "annotations.py").open("a") as module:
        module.write(
            "\nfrom metrics.suites.alignment import summary  # noqa: E402, F401\n"
        )
    result = lint_imports(tree)
    assert result.returncode != 0
    assert "Outside metrics, nothing imports a suite BROKEN" in result.stdout


def test_a_store_module_importing_the_pipeline_breaks_a_contract(tree):
    with (tree / "store" / "uploads.py").open("a") as module:
        module.write("\nimport pipeline.service.reuse  # noqa: E402, F401\n")
    result = lint_imports(tree)
    assert result.returncode != 0
    assert "store is not allowed to import pipeline" in result.stdout
    assert "store.uploads -> pipeline.service.reuse" in result.stdout


def test_no_test_imports_a_benchmark():
    """Tests and benchmarks share testing/; bench/ holds benchmarks only."""
    pattern = re.compile(r"^\s*(from bench\b|import bench\b)", re.MULTILINE)
    offenders = [
        str(path.relative_to(ROOT))
        for folder in ("tests", "testing")
        for path in (ROOT / folder).rglob("*.py")
        if pattern.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []


def top_level_modules() -> list[Path]:
    """The product's single-file modules (``app.py``, ``evaluator.py``...):
    import-linter and grimp take packages only."""
    return sorted(path for path in ROOT.glob("*.py") if path.stem.isidentifier())


def imports_of(path: Path) -> set[str]:
    """Every module ``path`` imports, however lazily (inside functions and
    under ``TYPE_CHECKING`` too), each ``from X import name`` as ``X.name``
    and ``X``."""
    import ast

    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def product_graph():
    """grimp's graph of the packages, with the top-level modules added: the
    imports into them (grimp keeps them as external modules) and, read here,
    the imports out of them."""
    import grimp

    packages = [name for name in root_packages() if (ROOT / name).is_dir()]
    graph = grimp.build_graph(*packages, "testing", include_external_packages=True)
    for path in top_level_modules():
        if path.stem not in graph.modules:
            graph.add_module(path.stem)
        for name in imports_of(path):
            parts = name.split(".")
            known = [
                ".".join(parts[:n])
                for n in range(len(parts), 0, -1)
                if ".".join(parts[:n]) in graph.modules
            ]
            if known and known[0] != path.stem:
                graph.add_import(importer=path.stem, imported=known[0])
    return graph


def test_the_import_graph_has_no_cycle():
    """No module imports, however lazily, a module that imports it back:
    grimp (the graph ``lint-imports`` reads) counts imports inside
    functions and under ``TYPE_CHECKING`` too. The top-level modules
    (``app.py``, ``evaluator.py``...) are in the graph too."""
    graph = product_graph()
    assert {"app", "evaluator", "config", "translations"} <= graph.modules
    assert graph.direct_import_exists(
        importer="evaluator", imported="judge_client.http"
    )
    cycles = [
        (module, imported)
        for module in sorted(graph.modules)
        for imported in sorted(graph.find_modules_directly_imported_by(module))
        if graph.chain_exists(importer=imported, imported=module)
    ]
    assert cycles == []


def test_the_task_names_are_the_ones_queued_tasks_carry(app):
    """A queued task is found by its name: the worker registers the names of
    earlier releases (the pipeline's split moved the tasks module, not them),
    and the service sends the same strings (pipeline/names.py)."""
    from pipeline import names

    celery = app.extensions["queue"].celery
    celery.loader.import_default_modules()  # what a worker does: the tasks
    registered = {name for name in celery.tasks if name.startswith("personasteer.")}
    queued_by_earlier_releases = {
        "personasteer.evaluate_chunk",
        "personasteer.finalize_run",
        "personasteer.compare_runs",
        "personasteer.compute_agreement",
        "personasteer.batch_step",
    }
    assert queued_by_earlier_releases <= registered
    sent = {
        names.EVALUATE_CHUNK,
        names.FINALIZE_RUN,
        names.COMPARE_RUNS,
        names.COMPUTE_AGREEMENT,
        names.BATCH_STEP,
    }
    assert sent == queued_by_earlier_releases
