"""The witness of the upload page (issue 56), in Debian's Chromium: files
made from the witness's plans, uploaded through the page's file input in a
drawn language, must be shown as the plain reading of the file
(``tests/witness/uploaded.py``) says.

- accepted iff the plain reading finds no error: its sessions and methods,
  and each warning once, under "Warnings (the file is accepted)", each
  method's missing replies with their count and lines;
- a rejected file never shows that heading nor lists anything under it
  (an ALOE file's warnings were once listed there, beside its 12 errors);
  its errors name the lines the plain reading finds;
- another tool's layout (ALOE) has its "Convert" offer first, before the
  errors; converted, the file is checked again and shown as the plain
  reading of the converted file says; the records it could not convert
  (no profile) are said with a reason that names the page's field, never
  a command-line option (it once said "(give --profile)").
"""

from __future__ import annotations

import threading
import uuid
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from werkzeug.serving import make_server

from tests.browser_support import translated
from tests.conftest import stop_embedded
from tests.witness import harness, plans, uploaded
from tests.witness.uploaded import Reading, line_of

pytestmark = pytest.mark.browser

LANGS = ("en", "zh", "ko")
# files generated per kind: 8 in all (a page each, a second or two)
FILES = {"own": 1, "missing": 2, "broken": 3, "aloe": 1, "aloe_unprofiled": 1}
GENERATED = settings(
    deadline=None,
    # a failure is reported as generated: no shrinking (each example is a
    # browser page)
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.filter_too_much,
    ],
)
CHECKED = "#check-result p.ok, #check-result section.problems"
CONVERTED = "[data-testid=convert-failed], [data-testid=converted-note]"

VALID = "Valid: %(sessions)s sessions, methods: %(methods)s."
ACCEPTED = "Warnings (the file is accepted):"
REJECTED = "The file was not accepted"
REPLIES_MISSING = (
    "%(path)s: %(missing)s of %(total)s replies missing (null or absent); they "
    "are counted apart and never scored."
)
TIMES = "(%(count)s times; first on lines %(lines)s)"


@pytest.fixture(scope="module")
def upload_site(tmp_path_factory):
    """The witness's app served on a port (no run is started: the page
    checks and converts files)."""
    folder = tmp_path_factory.mktemp("upload-page")
    app = harness.make_app(folder)
    server = make_server("127.0.0.1", 0, app, threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}", folder
    finally:
        server.shutdown()
        stop_embedded(app)
        app.extensions["storage"].engine.dispose()


def made(data, kind: str, folder: Path) -> tuple[Path, set[int]]:
    """A file of ``kind`` drawn from the plans, and (ALOE) the records
    written without a profile. Checks that the plain reading finds in it
    what the kind means."""
    if kind.startswith("aloe"):
        aloe = plans.plans(protocols=("aloe",)).filter(lambda p: p.layout == "aloe")
        plan = data.draw(aloe, label="plan")
    elif kind == "missing":
        lacking = plans.plans().filter(
            lambda p: any(item.answers is None for item in p.items)
        )
        plan = data.draw(lacking, label="plan")
    else:
        plan = data.draw(plans.plans(), label="plan")
    plan.nonce = uuid.uuid4().hex[:12]
    path = folder / f"{plan.nonce}.jsonl"
    unprofiled: set[int] = set()
    if kind == "aloe":  # some records (never all) without a profile
        records = st.integers(1, plan.sessions)
        unprofiled = data.draw(st.sets(records, max_size=plan.sessions - 1))
    elif kind == "aloe_unprofiled":
        unprofiled = set(range(1, plan.sessions + 1))
    if kind.startswith("aloe"):
        uploaded.aloe_file(plan, path, unprofiled)
        reading = uploaded.read(path)
        assert reading.foreign == "aloe"
        assert reading.error_lines == set(range(1, plan.sessions + 1))
        return path, unprofiled
    if kind == "broken":
        breakage = data.draw(uploaded.breakages(plan), label="breakage")
        uploaded.broken_file(plan, breakage, path)
        reading = uploaded.read(path)
        assert reading.error_lines == ({breakage.line} if breakage.is_error else set())
        assert reading.accepted is not breakage.is_error
        return path, unprofiled
    plan.write(path)
    reading = uploaded.read(path)
    assert reading.accepted and reading.sessions == plan.sessions
    assert reading.missing or kind != "missing"
    return path, unprofiled


@pytest.mark.parametrize("kind", FILES)
def test_the_upload_page_shows_a_file_as_its_plain_reading(upload_site, browser, kind):
    base, folder = upload_site

    @settings(GENERATED, max_examples=FILES[kind])
    @given(data=st.data())
    def upload(data):
        lang = data.draw(st.sampled_from(LANGS), label="lang")
        path, unprofiled = made(data, kind, folder)
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        try:
            page = context.new_page()
            page.set_default_timeout(30_000)
            page.goto(f"{base}/?lang={lang}")
            page.set_input_files("#file", str(path))
            page.wait_for_selector(CHECKED)
            page_agrees(page, uploaded.read(path), lang)
            if kind.startswith("aloe"):
                records = len(uploaded.read(path).error_lines)
                converted_agrees(page, lang, folder, records, unprofiled)
        finally:
            context.close()

    upload()


def page_agrees(page, reading: Reading, lang: str) -> None:
    """What ``#check-result`` says is the plain reading of the file."""
    shown = page.evaluate(uploaded.SHOWN)
    accepted = translated(lang, ACCEPTED)
    if not reading.accepted:
        assert shown["ok"] is None, f"a rejected file shown as valid: {shown['ok']!r}"
        assert shown["heading"] == translated(lang, REJECTED), shown["text"]
        assert shown["accepted_warnings"] is None and accepted not in shown["text"], (
            f"a rejected file's page lists warnings as accepted: {shown['text']!r}"
        )
        wheres = [line_of(error["where"]) for error in shown["errors"]]
        named = {line for line in wheres if line is not None}
        assert named == reading.error_lines, (
            f"errors on lines {sorted(named)}; the plain reading: "
            f"{sorted(reading.error_lines)} ({reading.errors})"
        )
        assert shown["submit_disabled"]
        if reading.foreign:
            assert shown["offers"] == 1, f"no Convert offer for {reading.foreign}"
        if shown["offers"]:
            assert shown["after_heading"] == "convert-offer", (
                f"the Convert offer is not first: {shown['text']!r}"
            )
        return
    assert shown["heading"] is None and not shown["offers"], shown["text"]
    methods = ", ".join(reading.methods)
    valid = translated(lang, VALID) % {"sessions": reading.sessions, "methods": methods}
    assert shown["ok"] == valid
    assert not shown["submit_disabled"]
    if not reading.warnings:
        assert shown["accepted_warnings"] is None, shown["text"]
        return
    assert shown["accepted_heading"] == accepted
    items = shown["accepted_warnings"]
    assert len(items) == len(reading.warnings), (
        f"{len(items)} warnings shown, the plain reading: {sorted(reading.warnings)}"
    )
    for method, missing in reading.missing.items():
        counts = {"path": method, "missing": missing, "total": reading.slots}
        message = translated(lang, REPLIES_MISSING) % counts
        found = [item for item in items if item["message"] == message]
        assert len(found) == 1, f"{message!r} not shown once: {items}"
        lines = reading.warnings[("replies_missing", method)]
        if len(lines) == 1:
            assert (line_of(found[0]["where"]), found[0]["times"]) == (lines[0], None)
        else:
            first = ", ".join(map(str, lines[:5]))
            times = translated(lang, TIMES) % {"count": len(lines), "lines": first}
            assert (found[0]["where"], found[0]["times"]) == (None, times)


def converted_agrees(
    page, lang: str, folder: Path, records: int, unprofiled: set[int]
) -> None:
    """Convert, with no profile given: the records without one are not
    converted, and why names the page's field (no "--" option); what was
    converted is checked again and shown as its plain reading."""
    label = page.evaluate(uploaded.PROFILE_LABEL)
    page.click("[data-testid=convert-file]")
    page.wait_for_selector(CONVERTED)
    failed = page.locator("[data-testid=convert-failed]")
    assert failed.count() == int(len(unprofiled) == records), page.inner_text("body")
    if failed.count():
        said = failed.inner_text()
        assert "--" not in said, f"a command-line option: {said!r}"
        names = uploaded.quoted(said)
        assert names and all(label.startswith(name) for name in names), (
            f"the reason names no field of the page ({label!r}): {said!r}"
        )
        assert page.locator("[data-testid=validation-warnings]").count() == 0
        return
    note = page.inner_text("[data-testid=converted-note]")
    skipped = page.locator("[data-testid=converted-note] li").all_inner_texts()
    assert {line_of(item) for item in skipped} == unprofiled, note
    for item in skipped:
        assert "--" not in item, f"a command-line option: {item!r}"
        names = uploaded.quoted(item)
        assert names and all(label.startswith(name) for name in names), item
    content = page.evaluate("() => document.getElementById('file').files[0].text()")
    converted = folder / f"converted-{uuid.uuid4().hex[:12]}.jsonl"
    converted.write_text(content, encoding="utf-8")
    reading = uploaded.read(converted)
    assert reading.accepted and reading.sessions == records - len(unprofiled)
    page_agrees(page, reading, lang)
