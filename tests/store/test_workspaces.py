"""Workspaces, view and manage tokens, and deletion: the API flow on SQLite
(embedded) and PostgreSQL (team mode), the workspace page
(``web/views/workspace_pages.py``), and the storage rules on both."""

from __future__ import annotations

import io
import re
from pathlib import Path

from sqlalchemy import func, select

from store.models import (
    JudgeCacheEntry,
    ResultRow,
    Run,
    RunCacheKey,
    RunChunk,
    RunSession,
    Workspace,
)
from tests import crafted
from tests.web.views.test_api import sample_bytes, settled, wait_final

FINAL = ("done", "partial", "failed", "cancelled")
RUN_FIELDS = {
    "file_name": "logs.jsonl",
    "file_sha256": "0" * 64,
    "methods": ["Base", "Ours"],
    "suites": ["quality"],
}


def upload(client, data: bytes, **fields):
    body = {"file": (io.BytesIO(data), "logs.jsonl"), "suites": "quality", **fields}
    return client.post("/api/v1/runs", data=body, content_type="multipart/form-data")


def left_of(storage, run_id: str) -> dict[str, int]:
    """Rows of every table that still name the run."""
    counts = {}
    with storage.engine.connect() as conn:
        for model in (ResultRow, RunChunk, RunSession, RunCacheKey):
            query = select(func.count()).where(model.run_id == run_id)
            counts[model.__tablename__] = conn.execute(query).scalar_one()
        query = select(func.count()).where(Run.id == run_id)
        counts["runs"] = conn.execute(query).scalar_one()
    return {table: n for table, n in counts.items() if n}


def test_workspace_flow_view_and_manage_tokens_and_deletion(web_app, tmp_path):
    client, storage = web_app.test_client(), web_app.extensions["storage"]
    created = client.post("/api/v1/workspaces", json={"name": "persona lab"})
    assert created.status_code == 201
    space = created.get_json()
    assert set(space) == {"token", "manage_token", "url", "manage_url"}
    assert space["token"] != space["manage_token"]
    assert min(len(space["token"]), len(space["manage_token"])) >= 22  # >= 128 bits

    data = crafted.write(
        tmp_path / "a.jsonl", crafted.alignment_sessions()
    ).read_bytes()
    runs = []
    for name in ("baseline v1", "ours v2"):
        answer = upload(client, data, workspace=space["manage_token"], name=name)
        assert answer.status_code == 202, answer.get_json()
        runs.append(answer.get_json())
        wait_final(client, runs[-1]["token"])
    assert upload(client, data, workspace=space["token"]).status_code == 403

    for token in (space["token"], space["manage_token"]):
        listed = client.get(f"/api/v1/workspaces/{token}").get_json()
        assert [r["name"] for r in listed["runs"]] == ["ours v2", "baseline v1"]
        assert all("manage_token" not in r for r in listed["runs"])
        assert listed["runs"][0]["status"] == "done"

    first, second = runs
    compared = settled(
        client, f"/api/v1/compare?runs={first['token']},{second['token']}"
    )
    assert compared.status_code == 200, compared.get_json()
    body = compared.get_json()
    assert [c["label"] for c in body["columns"]] == [
        "baseline v1/Base",
        "baseline v1/Ours",
        "ours v2/Base",
        "ours v2/Ours",
    ]
    assert body["shared"]["sessions"] == 2 and body["agreement"] == []
    assert {c["n"] for c in body["comparisons"]} == {2}
    view, manage = first["token"], first["manage_token"]
    for method, path in [
        ("post", f"/api/v1/runs/{view}/cancel"),
        ("post", f"/api/v1/runs/{view}/retry"),
        ("delete", f"/api/v1/runs/{view}"),
        ("patch", f"/api/v1/runs/{view}"),
        ("delete", f"/api/v1/workspaces/{space['token']}"),
    ]:
        refused = getattr(client, method)(path, json={"name": "x"})
        assert refused.status_code == 403, path
        assert "manage link" in refused.get_json()["errors"][0]["message"]
    zh = client.post(f"/api/v1/runs/{view}/cancel?lang=zh")
    assert (
        zh.status_code == 403
        and "manage link" not in zh.get_json()["errors"][0]["message"]
    )

    edited = client.patch(
        f"/api/v1/runs/{manage}", json={"name": "v1", "tags": ["a", "a ", "b"]}
    )
    assert edited.status_code == 200
    assert (edited.get_json()["name"], edited.get_json()["tags"]) == ("v1", ["a", "b"])
    bad = client.patch(f"/api/v1/runs/{manage}", json={"name": 3, "tags": "x"})
    assert bad.status_code == 400 and len(bad.get_json()["errors"]) == 2

    run_id = storage.runs.find_run(view).item.id
    upload_file = (
        Path(web_app.config["UPLOAD_FOLDER"])
        / f"{storage.runs.get_run(run_id).upload_id}.jsonl"
    )
    assert upload_file.exists() and left_of(storage, run_id)
    assert client.delete(f"/api/v1/runs/{manage}").status_code == 204
    for token in (view, manage):
        assert client.get(f"/api/v1/runs/{token}").status_code == 404
        assert client.get(f"/r/{token}").status_code == 404
    assert left_of(storage, run_id) == {}
    assert not upload_file.exists()

    second_id = storage.runs.find_run(second["token"]).item.id
    assert (
        client.delete(f"/api/v1/workspaces/{space['manage_token']}").status_code == 204
    )
    assert client.get(f"/api/v1/workspaces/{space['token']}").status_code == 404
    assert client.get(f"/api/v1/runs/{second['token']}").status_code == 404
    assert left_of(storage, second_id) == {}
    assert list(Path(web_app.config["UPLOAD_FOLDER"]).glob("*.jsonl")) == []
    with storage.engine.connect() as conn:
        assert (
            conn.execute(select(func.count()).select_from(Workspace)).scalar_one() == 0
        )


def test_deleting_a_run_keeps_what_another_run_still_uses(any_storage, tmp_path):
    folder = tmp_path / "uploads"
    folder.mkdir()
    (folder / "shared.jsonl").write_text("{}\n")
    first = any_storage.runs.create_run(**RUN_FIELDS, upload_id="shared")
    retry = any_storage.runs.create_run(**RUN_FIELDS, upload_id="shared")  # same file
    entry = {"prompt_version": "v1", "reply": "r", "parsed": {}}
    any_storage.judge_cache.cache_put(
        [{**entry, "key": key} for key in ("mine", "both", "older")]
    )
    any_storage.judge_cache.record_cache_keys(first.id, ["mine", "both"])
    any_storage.judge_cache.record_cache_keys(
        retry.id, ["both"]
    )  # "older": no record at all

    any_storage.runs.delete_run(first, folder)
    assert set(any_storage.judge_cache.cache_get(["mine", "both", "older"])) == {
        "both",
        "older",
    }
    assert (folder / "shared.jsonl").exists()  # the retry still reads it
    any_storage.runs.delete_run(retry, folder)
    assert set(any_storage.judge_cache.cache_get(["mine", "both", "older"])) == {
        "older"
    }
    assert not (folder / "shared.jsonl").exists()
    with any_storage.engine.connect() as conn:
        assert (
            conn.execute(select(func.count()).select_from(JudgeCacheEntry)).scalar_one()
            == 1
        )


def test_tokens_open_a_run_with_their_rights(any_storage):
    run = any_storage.runs.create_run(**RUN_FIELDS, upload_id="u")
    assert run.manage_token and run.manage_token != run.token
    assert any_storage.runs.find_run(run.token).can_manage is False
    assert any_storage.runs.find_run(run.manage_token).can_manage is True
    assert any_storage.runs.find_run("nope") is None
    # a run of an earlier release has one token, which keeps every right
    legacy = any_storage.runs.create_run(**RUN_FIELDS, upload_id="u", manage_token=None)
    assert any_storage.runs.find_run(legacy.token).can_manage is True


def test_workspace_page_lists_runs_and_only_the_manage_link_edits(
    app_factory, tmp_path
):
    app = app_factory()
    client, storage = app.test_client(), app.extensions["storage"]
    client.get("/")  # the start-up resume, before the runs exist
    space = storage.workspaces.create_workspace("lab")
    run = storage.runs.create_run(
        **RUN_FIELDS, upload_id="u", workspace_id=space.id, name="v1"
    )
    viewer = client.get(f"/w/{space.token}?lang=ko").get_data(as_text=True)
    assert "v1" in viewer and 'data-testid="edit-run"' not in viewer
    owner = client.get(f"/w/{space.manage_token}").get_data(as_text=True)
    assert 'data-testid="edit-run"' in owner and space.token in owner
    token = re.search(r'name="csrf_token" value="([^"]+)"', owner).group(1)
    refused = client.post(
        f"/w/{space.token}/runs/{run.token}", data={"name": "x", "csrf_token": token}
    )
    assert refused.status_code == 403
    edited = client.post(
        f"/w/{space.manage_token}/runs/{run.token}",
        data={
            "name": "v2",
            "tags": "judge-b, prompt-2",
            "comment": "new prompt",
            "csrf_token": token,
        },
    )
    assert edited.status_code == 303
    saved = storage.runs.get_run(run.id)
    assert (saved.name, saved.tags, saved.comment) == (
        "v2",
        ["judge-b", "prompt-2"],
        "new prompt",
    )


def test_saves_deletes_and_renames_confirm_and_runs_of_one_file_are_told_apart(
    app_factory,
):
    from tests.web.views.test_pages import csrf_token

    app = app_factory()
    client = app.test_client()
    space = client.post("/api/v1/workspaces", json={"name": "lab"}).get_json()
    runs = [
        upload(client, sample_bytes(), workspace=space["manage_token"]).get_json()
        for _ in range(2)
    ]
    page = client.get(f"/w/{space['manage_token']}").get_data(as_text=True)
    short_ids = re.findall(r'data-testid="run-short-id">#(\w+)<', page)
    assert len(set(short_ids)) == 2  # the same file twice, told apart

    base = f"/w/{space['manage_token']}"
    saved = client.post(
        f"{base}/runs/{runs[0]['token']}",
        data={
            "name": "v2",
            "tags": "",
            "comment": "",
            "csrf_token": csrf_token(client),
        },
        follow_redirects=True,
    ).get_data(as_text=True)
    assert 'data-testid="saved-notice"' in saved and "Saved: v2." in saved
    renamed = client.post(
        f"{base}/rename",
        data={"name": "persona lab", "csrf_token": csrf_token(client)},
        follow_redirects=True,
    ).get_data(as_text=True)
    assert 'data-testid="renamed-notice"' in renamed and "persona lab" in renamed
    patched = client.patch(f"/api/v1/workspaces/{space['token']}", json={"name": "x"})
    assert patched.status_code == 403  # the view token cannot rename
    patched = client.patch(
        f"/api/v1/workspaces/{space['manage_token']}", json={"name": "lab 3"}
    )
    assert patched.get_json() == {"name": "lab 3"}
    for run in runs:
        wait_final(client, run["token"])
    deleted = client.post(
        f"{base}/runs/{runs[1]['token']}/delete",
        data={"confirm": "yes", "csrf_token": csrf_token(client)},
        follow_redirects=True,
    ).get_data(as_text=True)
    assert 'data-testid="run-deleted-notice"' in deleted


def test_each_lead_value_shows_its_n_and_each_gap_says_why(app_factory):
    """Issue 56: a run's lead metric cell gives every value the sessions
    behind it, and a value, or a cell, without one says why."""
    app = app_factory()
    client, storage = app.test_client(), app.extensions["storage"]
    client.get("/")
    space = storage.workspaces.create_workspace("lab")
    fields = {**RUN_FIELDS, "upload_id": "u", "workspace_id": space.id}
    both = storage.runs.create_run(**{**fields, "suites": ["quality", "style"]})
    no_nvcs = {"nvcs_avg": None, "nvcs_avg_n": 0}
    summary = {
        "Base": {"quality_avg": 0.5, "quality_avg_n": 7, **no_nvcs},
        "Ours": {"quality_avg": 0.75, "quality_avg_n": 6, **no_nvcs},
    }
    storage.runs.update_run(both.id, status="done", aggregates={"summary": summary})
    storage.runs.create_run(**fields, name="running")  # quality only, queued
    page = client.get(f"/w/{space.token}?lang=en").get_data(as_text=True)
    cells = re.findall(
        r'data-testid="lead-cell" data-metric="(\w+)">(.*?)</td>', page, re.S
    )

    def text(html: str) -> str:
        return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).strip()

    shown = [(metric, text(html)) for metric, html in cells]
    # the queued run is listed first (newest), then the finished one
    assert shown[0] == ("quality_avg", "no result until the run finishes")
    assert shown[1] == ("nvcs_avg", "not evaluated in this run")
    assert shown[2] == ("quality_avg", "Base 0.50 n=7 Ours 0.75 n=6")
    assert shown[3] == ("nvcs_avg", "no scored value (n = 0)")


def test_a_workspace_body_that_is_no_json_object_is_refused(app):
    """Issue 57: 100,000 "[" (or an array, or text) made a workspace (201)."""
    client, storage = app.test_client(), app.extensions["storage"]
    refused = [
        ("application/json", "[" * 100_000),
        ("application/json", "[1]"),
        ("application/json", '"lab"'),
        ("application/json", "null"),
        ("text/plain", '{"name": "lab"}'),
        ("application/x-www-form-urlencoded", "[" * 1000),
    ]
    for kind, body in refused:
        answer = client.post("/api/v1/workspaces", data=body, content_type=kind)
        assert answer.status_code == 400, (kind, body[:20], answer.status_code)
        [error] = answer.get_json()["errors"]
        assert error["code"] == "json_only" and "JSON object" in error["message"]
    with storage.engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(Workspace)).scalar() == 0
    named = [
        client.post("/api/v1/workspaces", json={"name": "lab"}),
        client.post("/api/v1/workspaces", data={"name": "lab"}),
        client.post("/api/v1/workspaces"),  # no body: an unnamed workspace
    ]
    assert [answer.status_code for answer in named] == [201, 201, 201]


def test_a_form_body_that_parses_to_nothing_or_a_name_that_is_no_text_is_refused(app):
    """Issue 60: a multipart body of one NUL byte (no part in it) made a
    workspace (201), and so did ``{"name": false}`` (named "False")."""
    client, storage = app.test_client(), app.extensions["storage"]
    for kind in ("multipart/form-data", "multipart/form-data; boundary=x"):
        answer = client.post("/api/v1/workspaces", data=b"\x00", content_type=kind)
        assert answer.status_code == 400, kind
        [error] = answer.get_json()["errors"]
        assert (error["path"], error["code"]) == ("body", "json_only")
    for name in (False, 3, ["lab"], {"a": 1}):
        answer = client.post("/api/v1/workspaces", json={"name": name})
        assert answer.status_code == 400, name
        [error] = answer.get_json()["errors"]
        assert (error["path"], error["code"]) == ("name", "wrong_type")
    with storage.engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(Workspace)).scalar() == 0
    assert client.post("/api/v1/workspaces", json={"name": None}).status_code == 201


def test_a_run_deleted_while_it_is_edited_is_a_404(app, monkeypatch):
    """The run is found and its fields saved, then it is gone (deleted by
    another request between the two): the edit answers 404, not a 500 from
    listing no run."""
    storage = app.extensions["storage"]
    run = storage.runs.create_run(**RUN_FIELDS, upload_id="u")
    monkeypatch.setattr(storage.runs, "get_run", lambda run_id: None)
    edited = app.test_client().patch(
        f"/api/v1/runs/{run.manage_token}", json={"name": "v2"}
    )
    assert edited.status_code == 404
