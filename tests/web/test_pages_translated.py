"""Every page in Chinese and Korean shows no English catalog string: a run of
the sample file through a judge that answers everything, plus one row of
every note kind (metrics/notes.py), rendered page by page. The text of the
upload (responses, profiles, ...) is removed first: it is data, not UI."""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from babel.messages.pofile import read_po

from core.status import RunStatus
from metrics.notes import NOTES, note
from metrics.rows import result_row
from testing.judge_server import ScriptedJudge
from tests.pipeline_support import submit, wait_for
from tests.web.views.test_api import settled

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_data.jsonl"
PLACEHOLDER = re.compile(r"%\(\w+\)s|%%")
MIN_FRAGMENT = 10  # shorter English fragments can occur inside other words
# Shown in English on purpose: a paper's Methods section is written in English.
# The Methods paragraph is for an English paper; the Plotly locale block maps
# Plotly's English lookup keys to our translations.
# The Methods paragraph is English by design; a judge's reasoning and raw
# replies are data in whatever language the judge wrote them.
ENGLISH_BY_DESIGN = re.compile(
    r'<p id="methods-paragraph".*?</p>|<script type="application/json" id="plotly-locale">.*?</script>'
    r'|<p class="reasoning">.*?</p>|<pre class="raw"[^>]*>.*?</pre>',
    re.S,
)
PARAMS = {
    "field": "sample_dialogues",
    "components": "pas, bvs",
    "share": "12%",
    "missing": 1,
    "rounds": 2,
    "type": "'robot'",
    "status": 503,
    "kind": "ReadTimeout",
    "attempts": 3,
    "reason": "internal error",
    "method": "Base",
    "suite": "pairwise",
    "values": "70, 35",
    "low": 0,
    "high": 100,
    "protocol": "mt-bench",
    "part": "binary",
    "unbeaten": "A",
    "winless": "B, C",
    "judges": "judge-b",
    "items": 3,
    "limit": 1000,
    "groups": "A, B; C",
    "methods": "C",
    "n": 2,
    "tied": 4,
    "judge": "judge-a",
    "family": "acme",
    "min": 3,
    "left_out": 7,
    "resamples": 500,
    "offset": "+6.00",
    "ci_low": "5.20",
    "ci_high": "6.80",
    "ratio": "0.10",
    "checks": "violate, helpful",
}


@pytest.fixture(scope="module")
def code_messages(tmp_path_factory) -> set[str]:
    """Every msgid in the code (extracted now, so a string missing from the
    catalogs counts too)."""
    pot = tmp_path_factory.mktemp("pot") / "messages.pot"
    pybabel = Path(sys.executable).with_name("pybabel")
    subprocess.run(
        [str(pybabel), "extract", "-F", "babel.cfg", "-k", "_l", "-o", str(pot), "."],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    with pot.open("rb") as extracted:
        return {m.id for m in read_po(extracted) if m.id and isinstance(m.id, str)}


def english_fragments(lang: str, msgids: set[str]) -> set[str]:
    """Literal parts of the msgids a language does not write the same way."""
    path = ROOT / "locales" / lang / "LC_MESSAGES" / "messages.po"
    with path.open("rb") as po:
        same = {m.id for m in read_po(po) if m.id and m.string == m.id}
    found = set()
    for msgid in msgids - same:
        for part in PLACEHOLDER.split(msgid):
            if len(part.strip()) >= MIN_FRAGMENT:
                found.add(part.strip())
    return found


def data_strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in data_strings(item)]
    if isinstance(value, list):
        return [s for item in value for s in data_strings(item)]
    return []


UPLOADED = sorted(
    {
        s
        for line in SAMPLE.read_text(encoding="utf-8").splitlines()
        if line.strip()
        for s in data_strings(json.loads(line))
    },
    key=len,
    reverse=True,
)


def visible_ui_text(page: str) -> str:
    text = html.unescape(ENGLISH_BY_DESIGN.sub("", page))
    for value in UPLOADED:
        text = text.replace(value, " ")
    return text


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    from tests.conftest import stop_embedded
    from tests.pipeline_support import base_config
    from tests.worker_support import create_test_app

    tmp = tmp_path_factory.mktemp("pages")
    app = create_test_app(
        {
            **base_config(tmp),
            "DATABASE_URL": f"sqlite:///{tmp / 'db.sqlite3'}",
            "REDIS_URL": None,
            "WATCHDOG_INTERVAL_S": 3600,
        }
    )
    with ScriptedJudge() as judge:
        run_id = submit(app, SAMPLE, judge)
        wait_for(app, run_id)
        # the same file with other judge settings: the comparison shows agreement
        other_id = submit(app, SAMPLE, judge, samples=3)
        wait_for(app, other_id)
    storage = app.extensions["storage"]
    space = storage.workspaces.create_workspace("lab")
    for member in (run_id, other_id):
        storage.runs.update_run(member, workspace_id=space.id)
    run = storage.runs.get_run(run_id)
    first = storage.chunks.sessions_page(run.id, 0, 1)[0]
    storage.rows.upsert_rows(every_note_row(run.id, first, run.methods[0]))
    # The worker stays up (comparisons need it): it resumed when it started,
    # its watchdog sweeps hourly, and the run below has no chunks to send,
    # so it stays "running" and only its page is shown.
    running = storage.runs.create_run(
        file_name="x.jsonl",
        file_sha256="0" * 64,
        upload_id=run.upload_id,
        sessions=1,
        rounds=1,
        methods=["A"],
        suites=["quality"],
        status=RunStatus.RUNNING,
        total=10,
    )
    app.config["WORKSPACE"] = space  # read by pages()
    app.config["OTHER_RUN"] = storage.runs.get_run(other_id)
    yield app, storage.runs.get_run(run.id), first, running
    stop_embedded(app)
    storage.engine.dispose()


def every_note_row(run_id: str, session_id: str, method: str) -> list[dict]:
    rows = []
    for index, code in enumerate(NOTES):
        key = {"session_id": session_id, "round": 1000 + index, "method": method}
        value = 1.0 if NOTES[code][1] is None else None
        reason = note(code, **PARAMS)
        rows.append({**result_row(key, "ertd", value, note=reason), "run_id": run_id})
    return rows


def pages(app, run, session_id: str, running) -> list[str]:
    token, (a, b) = run.token, run.methods[:2]
    space, other = app.config["WORKSPACE"], app.config["OTHER_RUN"]
    return [
        "/",
        "/?deleted=1",
        f"/w/{space.token}",
        f"/w/{space.manage_token}",
        f"/compare?runs={token},{other.token}",
        f"/compare?runs={token}",
        f"/r/{token}",
        f"/r/{token}?metric=ertd&sort=round&dir=desc",
        f"/r/{token}?metric=ertd&sort=round&dir=desc&rates=percent",
        f"/r/{token}/session?id={session_id}",
        f"/r/{token}/replies?order=high",
        f"/r/{token}/replies?session_id={session_id}&status=error",
        f"/r/{token}/replies/exchange?session_id={session_id}&round=1&method={a}"
        "&judge=scripted&metric=al",
        f"/r/{token}/replies/exchange?session_id=none&round=1&method={a}",
        f"/r/{token}/values?metric=nvcs_avg&method={a}",
        f"/r/{token}/differences?metric=al&a={a}&b={b}",
        f"/r/{token}/search?q=the",
        f"/r/{token}/diff?id={session_id}&a={a}&b={b}",
        f"/r/{running.token}",
        "/r/no-such-token",
    ]


@pytest.mark.parametrize("lang", ["zh", "ko"])
def test_no_page_shows_an_english_catalog_string(site, code_messages, lang):
    app, run, session_id, running = site
    assert run.status == RunStatus.DONE
    fragments = english_fragments(lang, code_messages)
    client = app.test_client()
    found = {}
    for path in pages(app, run, session_id, running):
        joiner = "&" if "?" in path else "?"
        response = settled(client, f"{path}{joiner}lang={lang}")
        assert response.status_code in (200, 400, 404), path
        page = response.get_data(as_text=True)
        if path == f"/r/{running.token}":
            assert 'id="run-progress"' in page, "the running run shows its progress"
        text = visible_ui_text(page)
        untranslated = sorted(f for f in fragments if f in text)
        if untranslated:
            found[path] = untranslated
    assert found == {}, json.dumps(found, ensure_ascii=False, indent=1)


def test_every_note_kind_is_on_the_rows_page(site):
    app, run, _session, _running = site
    text = ""
    # the notes' rows, one per note kind, fill several pages of 50
    for number in range(1, len(NOTES) // 50 + 2):
        page = app.test_client().get(
            f"/r/{run.token}?metric=ertd&sort=round&dir=desc&page={number}"
        )
        text += html.unescape(page.get_data(as_text=True))
    for code in NOTES:
        assert note(code, **PARAMS).english in text, code
