"""Every route, fed hostile values in its path, query and body, on SQLite and
PostgreSQL, answers below 500 (issue 27): NUL bytes (PostgreSQL refuses them
in text), lone surrogates, non-UTF-8 percent escapes, huge integers and
superscript digits (``"²".isdigit()``), beside real tokens."""

from __future__ import annotations

import io
import json
from itertools import product
from urllib.parse import urlencode

import pytest

from tests import crafted
from tests.web.views.test_api import upload, wait_final

HOSTILE = ["%00", "a%00b", "%ED%A0%80", "%FF%FE", "9" * 30, "%C2%B2", "-1", "", "null"]
QUERY_NAMES = [
    "page",
    "cursor",
    "limit",
    "metric",
    "method",
    "status",
    "q",
    "runs",
    "baseline",
    "order",
    "sort",
    "dir",
    "id",
    "lang",
    "k",
    "session",
    "rows",
    "judge",
    "rates",
    "sessions_page",
]
BODIES = [
    (
        "application/json",
        '{"name": "\\ud800", "tags": ["\\u0000"], "comment": "\\udfff"}',
    ),
    ("application/json", '"x"'),
    ("application/json", '{"name": 1e999, "tags": "x"}'),
    ("application/json", "\xff\xfe"),
    ("application/x-www-form-urlencoded", "name=%00&tags=%ED%A0%80&suites=%00"),
]


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


# thousands of requests: about 165 s idle on SQLite, 300 s on PostgreSQL
# beside other work (a loaded machine is slow, not wrong)
@pytest.mark.timeout(1500)
def test_no_route_answers_500_to_hostile_values(fuzzed_app, tmp_path):
    app = fuzzed_app
    client = app.test_client()
    data = crafted.write(
        tmp_path / "a.jsonl", crafted.alignment_sessions()
    ).read_bytes()
    created = upload(client, data, suites="quality").get_json()
    wait_final(client, created["token"])
    space = client.post("/api/v1/workspaces").get_json()
    real = {
        "token": created["token"],
        "run_token": created["token"],
        "extension": "csv",
    }
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


# Integers past every integer type (issue 57): Python refuses to read more
# than 4,300 digits (ValueError), SQLite binds at most 64 bits
# (OverflowError) and PostgreSQL's INTEGER 32 (2147483648 is out of range).
HUGE = ["9" * 5001, str(2**70), str(-(2**64)), "2147483648", "-2147483649"]
INTEGER_NAMES = ["round", "page", "spage", "sessions_page", "item", "from"]
INTEGER_NAMES += ["cursor", "limit", "samples"]


def test_integers_past_every_integer_type_are_refused_not_500(fuzzed_app, tmp_path):
    app = fuzzed_app
    client = app.test_client()
    rows = crafted.alignment_sessions()
    data = crafted.write(tmp_path / "a.jsonl", rows).read_bytes()
    created = upload(client, data, suites="quality").get_json()
    wait_final(client, created["token"])
    token = created["token"]
    real = {"token": token, "run_token": token, "extension": "csv"}
    reply = {
        "session_id": rows[0]["session_id"],
        "method": next(iter(rows[0]["rounds"][0]["responses"])),
    }
    failures = []
    for (verb, path), name, huge in product(paths(app, real), INTEGER_NAMES, HUGE):
        if verb == "GET":
            query = urlencode({name: huge, **reply})
            failures += _send(client, verb, path, query)
    assert failures == [], "\n".join(failures)
    for huge in HUGE:  # a round no file can hold: as unknown as any other
        query = {"round": huge, **reply}
        answer = client.get(f"/r/{token}/replies/exchange", query_string=query)
        assert answer.status_code == 404, (huge, answer.status_code)


def test_huge_integers_in_a_run_form_are_refused_with_the_reason(fuzzed_app, tmp_path):
    client = fuzzed_app.test_client()
    data = crafted.write(tmp_path / "a.jsonl", crafted.alignment_sessions())
    protocol = f'name = "huge"\nversion = {HUGE[0]}\n'.encode()
    sent = [
        (lambda: {"samples": HUGE[0]}, "samples"),
        (lambda: {"samples": HUGE[1]}, "samples"),
        (lambda: {"protocol_file": (io.BytesIO(protocol), "p.toml")}, "4,300 digits"),
    ]
    for path in ("/api/v1/validate", "/api/v1/runs", "/runs"):
        for fields, reason in sent:
            body = {"file": (io.BytesIO(data.read_bytes()), "a.jsonl"), **fields()}
            answer = client.post(path, data=body, content_type="multipart/form-data")
            assert 400 <= answer.status_code < 500, (path, reason, answer.status_code)
            assert reason in answer.get_data(as_text=True), (path, reason)
