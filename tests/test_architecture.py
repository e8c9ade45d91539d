"""Imports point one way: metric code and the dataset format stay pure."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PURE_MODULES = [
    ROOT / "dataset.py",
    ROOT / "schema.py",
    *sorted((ROOT / "metrics").glob("*.py")),
]
FORBIDDEN = {
    "flask",
    "celery",
    "requests",
    "evaluator",
    "storage",
    "tasks",
    "views",
    "jobs",
    "app",
}


def imported_roots(path: Path) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            roots.add(node.module.split(".")[0])
    return roots


@pytest.mark.parametrize("path", PURE_MODULES, ids=lambda p: p.name)
def test_pure_modules_import_no_framework(path):
    assert imported_roots(path) & FORBIDDEN == set()


def test_the_rule_catches_a_violation(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import requests\nfrom flask import Flask\n")
    assert imported_roots(bad) & FORBIDDEN == {"requests", "flask"}
