"""Every route, fed hostile values in its path, query and body, on SQLite and
PostgreSQL, answers below 500 (issue 27): NUL bytes (PostgreSQL refuses them
in text), lone surrogates, non-UTF-8 percent escapes, huge integers and
superscript digits (``"²".isdigit()``), beside real tokens."""

from __future__ import annotations

import json
from itertools import product

import pytest

from tests import crafted
from tests.test_api import upload, wait_final

HOSTILE = ["%00", "a%00b", "%ED%A0%80", "%FF%FE", "9" * 30, "%C2%B2", "-1", "", "null"]
QUERY_NAMES = ["page", "cursor", "limit", "metric", "method", "status", "q", "runs",
               "baseline", "order", "sort", "dir", "id", "lang", "k", "session",
               "rows", "judge", "rates", "sessions_page"]  # fmt: skip
BODIES = [
    ("application/json", '{"name": "\\ud800", "tags": ["\\u0000"], "comment": "\\udfff"}'),
    ("application/json", '"x"'),
    ("application/json", '{"name": 1e999, "tags": "x"}'),
    ("application/json", "\xff\xfe"),
    ("application/x-www-form-urlencoded", "name=%00&tags=%ED%A0%80&suites=%00"),
]  # fmt: skip


def paths(app, values: dict[str, str]) -> list[tuple[str, str]]:
    """(method, path) of every rule, its arguments filled from ``values``."""
    found = []
    for rule in app.url_map.iter_rules():
        if rule.endpoint == "static" or "filename" in rule.arguments:
            continue
        for method in sorted(rule.methods - {"HEAD", "OPTIONS"}):
            path = rule.rule
            for name in rule.arguments:
                path = path.replace(f"<{name}>", values.get(name, "x"))
                for kind in ("int", "string", "path"):
                    path = path.replace(f"<{kind}:{name}>", values.get(name, "1"))
            found.append((method, path))
    return found


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def fuzzed_app(request):
    """The app on each database; the database is set up first, so it is
    torn down after the app's workers stop."""
    url = request.getfixturevalue(f"{request.param}_url")
    if request.param == "postgres":
        request.getfixturevalue("postgres_storage")  # the schema, migrated
    make = request.getfixturevalue("app_factory")
    return make(DATABASE_URL=url, WTF_CSRF_ENABLED=False, RATELIMIT_ENABLED=False)


def test_no_route_answers_500_to_hostile_values(fuzzed_app, tmp_path):
    app = fuzzed_app
    client = app.test_client()
    data = crafted.write(
        tmp_path / "a.jsonl", crafted.alignment_sessions()
    ).read_bytes()
    created = upload(client, data, suites="quality").get_json()
    wait_final(client, created["token"])
    space = client.post("/api/v1/workspaces").get_json()
    real = {"token": created["token"], "run_token": created["token"],
            "extension": "csv"}  # fmt: skip
    failures = []
    for hostile in HOSTILE:
        for method, path in paths(app, {name: hostile for name in real}):
            failures += _send(client, method, path, "")
    for (method, path), name, hostile in product(
        paths(app, real), QUERY_NAMES, HOSTILE
    ):
        if method == "GET":
            failures += _send(client, method, path, f"{name}={hostile}")
    for (method, path), (kind, body) in product(paths(app, real), BODIES):
        if method != "GET":
            failures += _send(client, method, path, "", kind, body)
    managed = paths(app, {"token": created["manage_token"], "extension": "csv"})
    spaced = paths(app, {"token": space["manage_token"], "run_token": created["token"]})
    for (method, path), (kind, body) in product(managed + spaced, BODIES):
        if method != "GET" and not _deletes(method, path):
            failures += _send(client, method, path, "", kind, body)
    for method, path in managed + spaced:  # last: deleting ends the others
        if _deletes(method, path):
            failures += _send(client, method, path, "", *BODIES[0])
    assert failures == [], "\n".join(failures)


def _deletes(method: str, path: str) -> bool:
    return method == "DELETE" or path.endswith("/delete")


def _send(client, method, path, query, kind=None, body=None) -> list[str]:
    url = f"{path}?{query}" if query else path
    data = body.encode("utf-8", "surrogatepass") if body is not None else None
    try:
        answer = client.open(url, method=method, data=data, content_type=kind)
    except Exception as exc:  # an exception out of the app is a 500 too
        return [f"{method} {url} {kind}: {type(exc).__name__}: {exc}"]
    with answer:  # streamed files (the favicon) are closed
        if answer.status_code >= 500:
            text = answer.get_data(as_text=True)[:200]
            return [
                f"{method} {url} {kind} {json.dumps(body)}: {answer.status_code} {text}"
            ]
    return []
