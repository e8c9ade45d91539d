"""Every route, fed hostile values in its path, query and body, on SQLite and
PostgreSQL, answers below 500 (issue 27): NUL bytes (PostgreSQL refuses them
in text), lone surrogates, non-UTF-8 percent escapes, huge integers and
superscript digits (``"²".isdigit()``), beside real tokens.

A query value reaches a route's own code only through the names the route
looks up; ``LookedUp`` notes them, and the names a route never looks up are
sent once each, every value among them, not in every pairing (``fuzz_query``)."""

from __future__ import annotations

import io
import json
import sys
from itertools import product
from typing import Any, ClassVar
from urllib.parse import urlencode

import pytest
from werkzeug.datastructures import ImmutableMultiDict

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


class LookedUp(ImmutableMultiDict):
    """A request's query arguments that note the names looked up one by one
    (``NAMES``), the code that reads them whole (``WHOLE``) and whether the
    request reached its view (``DISPATCHED``, set by ``fuzzed_app``)."""

    NAMES: ClassVar[set[object]] = set()
    WHOLE: ClassVar[set[str]] = set()
    DISPATCHED: ClassVar[bool] = False

    @classmethod
    def forget(cls) -> None:
        cls.NAMES.clear()
        cls.WHOLE.clear()
        cls.DISPATCHED = False

    def __getitem__(self, key: Any) -> Any:
        self.NAMES.add(key)
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        self.NAMES.add(key)
        return super().__contains__(key)

    def get(self, key: Any, *args: Any, **kwargs: Any) -> Any:
        self.NAMES.add(key)
        return super().get(key, *args, **kwargs)

    def getlist(self, key: Any, *args: Any, **kwargs: Any) -> Any:
        self.NAMES.add(key)
        return super().getlist(key, *args, **kwargs)

    def _whole(self) -> None:
        caller = sys._getframe(2)
        module = caller.f_globals.get("__name__", "")
        if not module.startswith("werkzeug.datastructures"):  # to_dict's items()
            self.WHOLE.add(f"{module}.{caller.f_code.co_qualname}")

    def keys(self, *args: Any, **kwargs: Any) -> Any:
        self._whole()
        return super().keys(*args, **kwargs)

    def values(self, *args: Any, **kwargs: Any) -> Any:
        self._whole()
        return super().values(*args, **kwargs)

    def items(self, *args: Any, **kwargs: Any) -> Any:
        self._whole()
        return super().items(*args, **kwargs)

    def lists(self, *args: Any, **kwargs: Any) -> Any:
        self._whole()
        return super().lists(*args, **kwargs)

    def listvalues(self, *args: Any, **kwargs: Any) -> Any:
        self._whole()
        return super().listvalues(*args, **kwargs)

    def to_dict(self, *args: Any, **kwargs: Any) -> Any:
        self._whole()
        return super().to_dict(*args, **kwargs)

    def copy(self, *args: Any, **kwargs: Any) -> Any:
        self._whole()
        return super().copy(*args, **kwargs)

    def __iter__(self) -> Any:
        self._whole()
        return super().__iter__()

    def __len__(self) -> int:
        self._whole()
        return super().__len__()


# The code that reads every query argument whatever the route: the check
# that refuses NUL and lone surrogates before any view, and the links a page
# builds from its own query. What it does with a value does not depend on
# the name the value comes under, and every value comes on every route.
EVERY_ROUTE = {"web.init_app.<locals>.refuse_unstorable_text", "web.with_args"}


def fuzz_query(client, path: str, names, values, query) -> list[str]:
    """The failures of GET ``path`` with each of ``names`` given each of
    ``values`` (``query(name, value)``: the query string; ``query()``: the
    one without them), narrowed by what the route looks up.

    The query without them shows the names the route looks up (a route
    runs the same code up to its first look-up of a name, whatever the
    name's value); those get every value. The others (``unread``) change
    nothing the route does, so one value each stands for all: every unread
    name is sent until a value reaches the view, and every value is sent
    under one, for the code in ``EVERY_ROUTE``. A request that looks up an
    unread name after all is a failure; a route that reads the query whole
    in its own code gets every pairing."""
    LookedUp.forget()
    failures = _send(client, "GET", path, query())
    if LookedUp.WHOLE <= EVERY_ROUTE:
        read = [name for name in names if name in LookedUp.NAMES]
    else:
        read = list(names)
    for name, value in product(read, values):
        failures += _send(client, "GET", path, query(name, value))
    unread = [name for name in names if name not in read]
    sent: list[str] = []  # the values sent under unread names, in turn

    def send_unread(name: str) -> bool:
        sent.append(values[len(sent) % len(values)])
        LookedUp.forget()
        failures.extend(_send(client, "GET", path, query(name, sent[-1])))
        if name in LookedUp.NAMES or not LookedUp.WHOLE <= EVERY_ROUTE:
            failures.append(
                f"GET {path}?{query(name, sent[-1])}: {name!r} was read here"
                f" (looked up, or the query read whole by {LookedUp.WHOLE}),"
                " not without it: the narrowing does not hold"
            )
        return LookedUp.DISPATCHED

    for name in unread:
        for _value in values:
            if send_unread(name):  # a value reached the view
                break
    while unread and len(sent) < len(values):  # more values than unread names
        send_unread(unread[len(sent) % len(unread)])
    return failures


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def fuzzed_app(request):
    """The app on each database; the database is set up first, so it is
    torn down after the app's workers stop."""
    url = request.getfixturevalue(f"{request.param}_url")
    if request.param == "postgres":
        request.getfixturevalue("postgres_storage")  # the schema, migrated
    make = request.getfixturevalue("app_factory")
    app = make(DATABASE_URL=url, WTF_CSRF_ENABLED=False, RATELIMIT_ENABLED=False)
    app.request_class = type(
        "Request", (app.request_class,), {"parameter_storage_class": LookedUp}
    )
    dispatch = app.dispatch_request

    def dispatched() -> Any:  # past every before_request check, to the view
        LookedUp.DISPATCHED = True
        return dispatch()

    app.dispatch_request = dispatched
    return app


# about 2,400 requests (7,300 before fuzz_query), 6 s of CPU on each
# database idle; the wall time beside other work is many times that (a
# loaded machine is slow, not wrong)
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
    for method, path in paths(app, real):
        if method == "GET":
            failures += fuzz_query(client, path, QUERY_NAMES, HOSTILE, raw_query)
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


def raw_query(name: str = "", hostile: str = "") -> str:
    """``name=hostile`` as it is: the escapes in HOSTILE stay escapes."""
    return f"{name}={hostile}" if name else ""


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

    def beside_reply(name: str = "", huge: str = "") -> str:
        return urlencode({name: huge, **reply} if name else reply)

    failures = []
    for verb, path in paths(app, real):
        if verb == "GET":
            failures += fuzz_query(client, path, INTEGER_NAMES, HUGE, beside_reply)
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
