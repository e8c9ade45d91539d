"""Functions of the product code whose bodies are the same once every name
and constant is blanked: copies, and copies with renamed variables. A
stand-in for the ``duplicates`` tool where it is not installed.

Usage: .venv/bin/python scripts/near_copies.py [MIN_NODES]   (default 40)
Prints one line per group of look-alikes (file:line name (AST nodes)); a
small body (a route handler, a one-table count) may rhyme with another
without being a copy, so read before folding.
"""

from __future__ import annotations

import ast
import collections
import hashlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = (
    "web",
    "cli",
    "pipeline",
    "store",
    "metrics",
    "dataset",
    "core",
    "judge_client",
)
MODULES = ("app.py", "evaluator.py", "config.py", "translations.py")


class _Blank(ast.NodeTransformer):
    def visit_Name(self, node):
        return ast.Name(id="_", ctx=node.ctx)

    def visit_arg(self, node):
        return ast.arg(arg="_")

    def visit_Attribute(self, node):
        self.generic_visit(node)
        node.attr = "_"
        return node

    def visit_Constant(self, node):
        return ast.Constant(value=0)


def _files() -> list[Path]:
    found = [
        p
        for name in PACKAGES
        for p in (ROOT / name).rglob("*.py")
        if "migrations" not in p.parts
    ]
    return found + [ROOT / name for name in MODULES]


def _shape(body: list[ast.stmt]) -> str:
    return "".join(
        ast.dump(_Blank().visit(ast.parse(ast.unparse(stmt))), annotate_fields=False)
        for stmt in body
    )


def look_alikes(minimum: int = 40) -> list[list[str]]:
    groups: dict[str, list[str]] = collections.defaultdict(list)
    for path in _files():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            body = node.body
            if (
                body
                and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
            ):
                body = body[1:]  # the docstring
            size = sum(1 for stmt in body for _ in ast.walk(stmt))
            if size >= minimum:
                where = f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({size})"
                groups[hashlib.sha1(_shape(body).encode()).hexdigest()].append(where)
    return [group for group in groups.values() if len(group) > 1]


if __name__ == "__main__":
    for group in look_alikes(int(sys.argv[1]) if len(sys.argv) > 1 else 40):
        print("  ".join(group))
