"""The storage is small repositories: no class in ``store/`` has more than
20 public methods (inherited ones counted), and a caller names the one it
uses. (That they are fully typed is ``mypy --strict``'s check on ``store/``,
configured in ``pyproject.toml``.)"""

from __future__ import annotations

import inspect

import store
from store import storage as storage_module
from store.storage import Storage

MOST_METHODS = 20


def public_methods(cls: type) -> list[str]:
    return [
        name
        for name, member in inspect.getmembers(cls)
        if not name.startswith("_")
        and (inspect.isfunction(member) or isinstance(member, property))
    ]


def store_classes() -> list[type]:
    import pkgutil
    from importlib import import_module

    found = []
    for module_info in pkgutil.iter_modules(store.__path__):
        module = import_module(f"store.{module_info.name}")
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == module.__name__:
                found.append(cls)
    return found


def test_no_storage_class_has_more_than_20_public_methods():
    counts = {cls.__qualname__: len(public_methods(cls)) for cls in store_classes()}
    assert counts["Storage"] <= 5  # the repositories are attributes, not methods
    assert {name: n for name, n in counts.items() if n > MOST_METHODS} == {}


REPOSITORIES = {
    "runs",
    "chunks",
    "rows",
    "replies",
    "progress",
    "judge_cache",
    "budget",
    "comparisons",
    "annotations",
    "workspaces",
    "batches",
}


def test_each_repository_is_reached_by_name(sqlite_url):
    made = Storage(sqlite_url)
    found = {
        name
        for name, value in vars(made).items()
        if isinstance(value, storage_module.Repository)
    }
    assert found == REPOSITORIES


def test_the_lazy_storage_names_each_repository_with_its_type():
    """No ``__getattr__``: a checker sees the real type of each repository."""
    properties = {
        name: member
        for name, member in vars(store.LazyStorage).items()
        if isinstance(member, property)
    }
    assert set(properties) >= REPOSITORIES
    assert not hasattr(store.LazyStorage, "__getattr__")
