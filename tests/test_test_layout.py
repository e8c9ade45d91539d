"""The tests mirror the code (issue 60 item 8; ``docs/architecture.md``, "Tests").

Every product module (the packages and top-level modules ``pyproject.toml``
type-checks) is named by a test: a test module imports it (``import a.b``,
``from a.b import x``, ``from a import b``) or writes its dotted name or its
file's path, or ``tests/<package>/test_<module>.py`` exists, or the module
holds doctests (``--doctest-modules`` runs them as its tests). A test module
lives in the folder of the package it tests, in one of the folders for what
crosses packages, or at the top for a top-level module or a check of the
repository as a whole.
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# test folders that mirror no package: browser flows, the scripted judge
# (testing/), the set-up scripts, the witness and the fault drills
OTHER_FOLDERS = {"browser", "testing", "scripts", "witness", "faults"}
# top-level test modules that test no top-level module: the repository's
# own rules and the port the set-up checks
REPOSITORY_CHECKS = {
    "test_contributing.py",
    "test_import_contracts.py",
    "test_port.py",
    "test_test_layout.py",
}


def product_modules(root: Path) -> dict[str, Path]:
    """Dotted name → file of every product module; an empty ``__init__.py``
    is no module of its own (its package is its modules)."""
    files = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["mypy"][
        "files"
    ]
    modules = {}
    for entry in files:
        path = root / entry
        found = [path] if path.suffix == ".py" else sorted(path.rglob("*.py"))
        for file in found:
            relative = file.relative_to(root)
            if "migrations" in relative.parts:
                continue
            parts = list(relative.with_suffix("").parts)
            if parts[-1] == "__init__":
                if not file.read_text(encoding="utf-8").strip():
                    continue
                parts.pop()
            modules[".".join(parts)] = relative
    return modules


def files_of_tests(root: Path) -> list[Path]:
    tests = root / "tests"
    return [*sorted(tests.rglob("test_*.py")), tests / "conftest.py"]


def names_in(file: Path) -> tuple[set[str], str]:
    """The modules a test file imports, and its text."""
    text = file.read_text(encoding="utf-8")
    imported: set[str] = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            imported.add(node.module)
            imported.update(f"{node.module}.{alias.name}" for alias in node.names)
    return imported, text


def mentions(text: str, module: str, path: Path) -> bool:
    """A dotted name (``pipeline.worker.interim``) or a file path
    (``pipeline/worker/interim.py``) written whole; a top-level module's bare
    name (``app``) is a word of prose, so only its import or path count."""
    # the plain substring test first: a pattern that opens with a lookbehind
    # is tried at every position of the text (40,000 searches of whole test
    # files took 12 s of CPU), and most modules are not in most files
    dotted = (
        "." in module
        and module in text
        and re.search(rf"(?<![\w.]){re.escape(module)}(?![\w])", text)
    )
    written = str(path)
    return bool(dotted) or (
        written in text
        and re.search(rf"(?<![\w/]){re.escape(written)}", text) is not None
    )


def mirror(root: Path, module: str) -> Path:
    *package, name = module.split(".")
    return root.joinpath("tests", *package, f"test_{name}.py")


def unnamed(root: Path) -> list[str]:
    """The product modules no test names, in order."""
    modules = product_modules(root)
    named: set[str] = set()
    for file in files_of_tests(root):
        if not file.exists():
            continue
        imported, text = names_in(file)
        named.update(
            m for m, path in modules.items() if m in imported or mentions(text, m, path)
        )
    return sorted(
        module
        for module, path in modules.items()
        if module not in named
        and not mirror(root, module).exists()
        and ">>> " not in (root / path).read_text(encoding="utf-8")
    )


def misplaced(root: Path) -> list[str]:
    """Test modules outside the mirror and the named folders."""
    tests = root / "tests"
    modules = product_modules(root)
    top_level = {f"test_{m}.py" for m, path in modules.items() if len(path.parts) == 1}
    top_level.add("test_gunicorn.py")  # gunicorn.conf.py, no module mypy checks
    wrong = []
    for file in sorted(tests.rglob("test_*.py")):
        folder = file.parent.relative_to(tests)
        if folder == Path("."):
            ok = file.name in top_level | REPOSITORY_CHECKS
        else:
            ok = (
                folder.parts[0] in OTHER_FOLDERS
                or (root / folder / "__init__.py").exists()
            )
        if not ok:
            wrong.append(str(file.relative_to(root)))
    return wrong


def test_every_product_module_is_named_by_a_test():
    assert unnamed(ROOT) == []


def test_every_test_module_sits_in_the_mirror():
    assert misplaced(ROOT) == []


def test_every_test_folder_is_a_package():
    """Two folders may hold modules of one name only as packages
    (``tests.web.views.test_replies``, ``tests.browser.test_replies``)."""
    folders = {file.parent for file in (ROOT / "tests").rglob("test_*.py")}
    assert (
        sorted(
            str(f.relative_to(ROOT))
            for f in folders
            if not (f / "__init__.py").exists()
        )
        == []
    )


def write(path: Path, text: str = "") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_the_checks_find_an_unnamed_module_and_a_misplaced_test(tmp_path):
    write(tmp_path / "pyproject.toml", '[tool.mypy]\nfiles = ["pkg", "top.py"]\n')
    write(tmp_path / "top.py", "X = 1\n")
    write(tmp_path / "pkg/__init__.py")
    write(
        tmp_path / "pkg/sub/__init__.py",
        '"""A package with code of its own."""\nY = 2\n',
    )
    for name in (
        "mirrored",
        "imported",
        "from_imported",
        "by_path",
        "doctested",
        "alone",
    ):
        write(tmp_path / f"pkg/{name}.py", "Z = 3\n")
    write(tmp_path / "pkg/doctested.py", '"""\n>>> 1 + 1\n2\n"""\n')
    write(tmp_path / "tests/conftest.py", "import top\n")
    write(tmp_path / "tests/pkg/__init__.py")
    write(tmp_path / "tests/pkg/test_mirrored.py")
    write(
        tmp_path / "tests/pkg/test_things.py",
        "import pkg.imported\nfrom pkg import from_imported\n",
    )
    write(tmp_path / "tests/test_paths.py", 'FILE = "pkg/by_path.py"\n')
    write(tmp_path / "tests/elsewhere/test_lost.py")

    assert product_modules(tmp_path).keys() == {
        "top",
        "pkg.sub",
        "pkg.mirrored",
        "pkg.imported",
        "pkg.from_imported",
        "pkg.by_path",
        "pkg.doctested",
        "pkg.alone",
    }
    assert unnamed(tmp_path) == ["pkg.alone", "pkg.sub"]
    assert misplaced(tmp_path) == [
        "tests/elsewhere/test_lost.py",
        "tests/test_paths.py",
    ]
