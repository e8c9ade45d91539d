"""Upload once (pipeline/service/kept_uploads.py): the upload page's check keeps a
valid file and answers a signed reference; the run is started with the
reference, and the file is not sent again."""

from __future__ import annotations

import hashlib
import io
import os
import time
from pathlib import Path

import pytest

from pipeline.service import kept_uploads
from store.uploads import PENDING
from tests.web.views.test_api import sample_bytes, wait_final


def check(client, data: bytes, **fields):
    body = {"file": (io.BytesIO(data), "logs.jsonl"), **fields}
    return client.post(
        "/api/v1/validate", data=body, content_type="multipart/form-data"
    )


def start(client, ref: str, **fields):
    body = {"upload_ref": ref, "suites": "quality", **fields}
    return client.post("/api/v1/runs", data=body, content_type="multipart/form-data")


@pytest.fixture
def client(app):
    return app.test_client()


def pending(app) -> list[Path]:
    return sorted((Path(app.config["UPLOAD_FOLDER"]) / PENDING).glob("*.jsonl"))


def test_a_checked_file_starts_its_run_by_reference_once(app, client):
    data = sample_bytes()
    checked = check(client, data, keep="1", suites="quality").get_json()
    assert checked["valid"] and checked["upload_ref"]
    assert len(pending(app)) == 1
    answer = start(client, checked["upload_ref"])
    assert answer.status_code == 202, answer.get_json()
    final = wait_final(client, answer.get_json()["token"])
    assert final["status"] == "done"
    run = app.extensions["storage"].runs.get_run_by_token(answer.get_json()["token"])
    assert run.file_sha256 == hashlib.sha256(data).hexdigest()
    assert run.file_name == "logs.jsonl" and pending(app) == []
    again = start(client, checked["upload_ref"])  # taken: not a second run of it
    assert again.status_code == 400
    assert again.get_json()["errors"][0]["code"] == "upload_expired"


def test_no_reference_without_keep_or_for_an_invalid_file(app, client):
    assert "upload_ref" not in check(client, sample_bytes()).get_json()
    invalid = check(client, b'{"session_id": 1}\n', keep="1").get_json()
    assert not invalid["valid"] and "upload_ref" not in invalid
    assert pending(app) == []


def test_a_forged_or_stale_reference_is_refused(app, client, monkeypatch):
    forged = start(
        client, "x" + kept_uploads.reference(app.config, "a" * 32, "0" * 64, "f.jsonl")
    )
    assert forged.get_json()["errors"][0]["code"] == "upload_expired"
    ref = check(client, sample_bytes(), keep="1").get_json()["upload_ref"]
    monkeypatch.setattr(kept_uploads, "KEPT_S", -1)  # an hour has passed
    stale = start(client, ref)
    assert stale.status_code == 400
    assert stale.get_json()["errors"][0]["code"] == "upload_expired"


def test_unused_kept_files_are_swept_after_an_hour(app, client):
    check(client, sample_bytes(), keep="1")
    [old] = pending(app)
    an_hour_ago = time.time() - kept_uploads.KEPT_S - 1
    os.utime(old, (an_hour_ago, an_hour_ago))
    check(client, sample_bytes(), keep="1")  # the next kept file sweeps it
    assert old not in pending(app) and len(pending(app)) == 1


def from_address(app, address: str):
    client = app.test_client()
    client.environ_base["REMOTE_ADDR"] = address
    return client


def test_a_client_keeps_its_newest_checks_only(app_factory):
    """Issue 57: eight checks of one file from one address kept eight copies
    (+223 MB in 3.8 s for a 27.8 MB file); a client keeps its newest two."""
    app = app_factory(KEPT_UPLOADS_PER_CLIENT=2)
    one, other = from_address(app, "10.0.0.1"), from_address(app, "10.0.0.2")
    refs = [check(one, sample_bytes(), keep="1") for _ in range(8)]
    refs = [answer.get_json()["upload_ref"] for answer in refs]
    theirs = check(other, sample_bytes(), keep="1").get_json()["upload_ref"]
    assert len(pending(app)) == 3  # one's newest two, and the other's
    replaced = start(one, refs[0])
    assert replaced.status_code == 400
    assert replaced.get_json()["errors"][0]["code"] == "upload_expired"
    assert "newer checks" in replaced.get_json()["errors"][0]["message"]
    for client, ref in ((one, refs[-1]), (one, refs[-2]), (other, theirs)):
        answer = start(client, ref)
        assert answer.status_code == 202, answer.get_json()
        wait_final(client, answer.get_json()["token"])
    assert pending(app) == []


def test_over_the_ceiling_a_check_keeps_nothing_and_says_why(app_factory):
    size = len(sample_bytes())
    app = app_factory(KEPT_UPLOADS_MB=1.5 * size / kept_uploads.MB)
    first = check(from_address(app, "10.0.0.1"), sample_bytes(), keep="1")
    assert first.status_code == 200 and first.get_json()["upload_ref"]
    client = from_address(app, "10.0.0.2")
    refused = check(client, sample_bytes(), keep="1", suites="quality")
    assert refused.status_code == 429
    body = refused.get_json()
    assert body["valid"] and body["upload_ref"] is None and body["suites"]
    [error] = body["errors"]
    assert error["code"] == "keep_refused"
    assert (
        "is full" in error["message"]
        and "Send the file with the run" in error["message"]
    )
    assert len(pending(app)) == 1  # the refused one is not left behind
    zh = client.post(
        "/api/v1/validate?lang=zh",
        data={"file": (io.BytesIO(sample_bytes()), "logs.jsonl"), "keep": "1"},
        content_type="multipart/form-data",
    ).get_json()["errors"][0]["message"]
    assert zh != error["message"] and "MB" in zh
    sent = client.post(  # the page then sends the file with the run
        "/api/v1/runs",
        data={"file": (io.BytesIO(sample_bytes()), "logs.jsonl"), "suites": "quality"},
        content_type="multipart/form-data",
    )
    assert sent.status_code == 202, sent.get_json()
    assert wait_final(client, sent.get_json()["token"])["status"] == "done"


def test_a_file_larger_than_the_ceiling_is_not_written_to_be_deleted(app_factory):
    app = app_factory(KEPT_UPLOADS_MB=0)  # keep none
    refused = check(app.test_client(), sample_bytes(), keep="1")
    assert refused.status_code == 429
    assert refused.get_json()["errors"][0]["code"] == "keep_refused"
    folder = Path(app.config["UPLOAD_FOLDER"]) / PENDING
    assert not folder.exists() or list(folder.iterdir()) == []
