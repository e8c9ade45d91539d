"""Unfinished runs are resumed exactly once per start (pipeline/resume.py)."""

from __future__ import annotations

import pytest
import redis

from pipeline.resume import EPOCH_KEY, BrokerEpoch, EmbeddedResume
from tests import services

RUN = {"file_name": "a.jsonl", "file_sha256": "0" * 64, "upload_id": "u",
       "methods": ["M"], "suites": ["quality"]}  # fmt: skip


class Counting:
    """A run service stand-in that counts resumes (tests only)."""

    def __init__(self, storage):
        self.storage, self.calls = storage, []

    def resume_unfinished(self, created_before=None) -> int:
        found = self.storage.unfinished_runs(created_before)
        self.calls.append([run.id for run in found])
        return len(found)


def test_embedded_resume_runs_once_per_process_and_once_per_machine(
    sqlite_storage, tmp_path
):
    sqlite_storage.create_run(**RUN)
    first, second = Counting(sqlite_storage), Counting(sqlite_storage)
    serving = EmbeddedResume(first, tmp_path)
    other_process = EmbeddedResume(second, tmp_path)  # e.g. a second gunicorn worker
    assert serving() == 1
    assert serving() is None  # later requests
    assert other_process() is None  # the lock file is held by the serving process
    assert second.calls == []
    serving.close()
    assert (
        EmbeddedResume(second, tmp_path)() == 1
    )  # after it exits, the next start resumes


def test_the_app_resumes_on_its_first_request_only(app_factory):
    app = app_factory()
    calls = []
    app.extensions["runs"].resume_unfinished = lambda **kw: calls.append(kw) or 0
    client = app.test_client()
    client.get("/")
    client.get("/")
    assert calls == [{}]


@pytest.mark.redis
def test_team_mode_resumes_once_per_broker_lifetime(sqlite_storage):
    services.require("Redis", "127.0.0.1", 6379)
    client = redis.Redis.from_url(services.REDIS_URL)
    client.delete(EPOCH_KEY)  # the broker lost its data (a restart without persistence)
    lost = sqlite_storage.create_run(**RUN)
    service = Counting(sqlite_storage)
    epoch = BrokerEpoch(service, services.REDIS_URL)
    assert epoch() == 1 and service.calls == [[lost.id]]
    sqlite_storage.create_run(**RUN)  # queued after the epoch: its task is in Redis
    assert epoch() is None and BrokerEpoch(service, services.REDIS_URL)() is None
    assert len(service.calls) == 1
    client.delete(EPOCH_KEY)
    client.close()


def test_web_processes_in_team_mode_check_the_broker_instead_of_resuming(app_factory):
    app = app_factory(REDIS_URL="redis://127.0.0.1:1/0")
    assert (
        "resume" not in app.extensions
    )  # no first-request resume without a worker here
    assert isinstance(app.extensions["runs"].broker_check, BrokerEpoch)
