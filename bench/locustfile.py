"""Locust users of the load drill; ``bench/load.py`` runs this file headless
in its own process (Locust monkey-patches the standard library with gevent,
so nothing else imports it). Settings come from the environment:

* ``DRILL_TOKEN`` the run every user reads (required);
* ``DRILL_WAIT_S`` think time between tasks, ``"min,max"`` seconds
  (default ``0.5,1.5``: about one request a second per user, the rate at
  which the run page polls its status; ``0,0`` for a closed loop);
* ``DRILL_POLLS`` status polls after each upload of ``MixedUser`` (default 3);
* ``DRILL_TIMEOUT_S`` the read timeout of every request (default 30).

Every request counts as failed unless its status is 2xx or 3xx (redirects
are not followed). Requests are grouped by route, not by token.
"""

from __future__ import annotations

import os
from pathlib import Path

from locust import HttpUser, between, task

SAMPLE = (Path(__file__).resolve().parents[1] / "sample_data.jsonl").read_bytes()


def _setting(name: str, default: str) -> str:
    return os.environ.get(name, "").strip() or default


def _wait_range() -> tuple[float, float]:
    low, high = _setting("DRILL_WAIT_S", "0.5,1.5").split(",")
    return float(low), float(high)


TOKEN = _setting("DRILL_TOKEN", "")
POLLS = int(_setting("DRILL_POLLS", "3"))
TIMEOUT_S = float(_setting("DRILL_TIMEOUT_S", "30"))


class DrillUser(HttpUser):
    """Shared plumbing: every request checked, named by route."""

    abstract = True
    wait_time = between(*_wait_range())

    def on_start(self) -> None:
        if not TOKEN:
            raise RuntimeError("DRILL_TOKEN is not set")

    def call(self, method: str, path: str, name: str, **kwargs):
        """One request; a failure unless 2xx/3xx. Returns the response."""
        with self.client.request(
            method,
            path,
            name=name,
            timeout=TIMEOUT_S,
            allow_redirects=False,
            catch_response=True,
            **kwargs,
        ) as response:
            if 200 <= response.status_code < 400:
                response.success()
            elif response.status_code == 0:  # no reply: timeout, refused, reset
                response.failure(type(response.error).__name__)
            else:
                response.failure(f"HTTP {response.status_code}")
            return response

    def dashboard(self) -> None:
        self.call("GET", f"/r/{TOKEN}", "/r/[token]")

    def status(self) -> None:
        self.call("GET", f"/api/v1/runs/{TOKEN}", "/api/v1/runs/[token]")


class MixedUser(DrillUser):
    """The 50-client drill: mostly reads of a shared finished run and the
    upload page; one task in eleven uploads ``sample_data.jsonl`` (default
    suites) and polls the new run's status a few times."""

    @task(4)
    def view_dashboard(self) -> None:
        self.dashboard()

    @task(4)
    def poll_shared(self) -> None:
        self.status()

    @task(2)
    def upload_page(self) -> None:
        self.call("GET", "/", "/")

    @task(1)
    def upload_and_poll(self) -> None:
        files = {"file": ("drill.jsonl", SAMPLE, "application/jsonl")}
        created = self.call("POST", "/api/v1/runs", "/api/v1/runs", files=files)
        if created.status_code != 202:
            return
        token = created.json()["token"]
        for _ in range(POLLS):
            self.wait()
            self.call("GET", f"/api/v1/runs/{token}", "/api/v1/runs/[new]")


class ReaderUser(DrillUser):
    """The responsiveness drill: a run's dashboard and its status, nothing
    else (what a browser on the run page, or a script polling it, asks)."""

    @task
    def view_dashboard(self) -> None:
        self.dashboard()

    @task
    def poll_status(self) -> None:
        self.status()


class ViewLinkReader(DrillUser):
    """A lab on one link (issue 61): a finished run's view link and its
    replies grid, read as a browser reads them. Each user keeps the
    ``ETag`` of what it was sent and asks again with ``If-None-Match`` (a
    reload), unless ``DRILL_CONDITIONAL=0`` (every request a first visit).
    A 304 counts as a success; it is reported under its route."""

    conditional = _setting("DRILL_CONDITIONAL", "1") != "0"

    def on_start(self) -> None:
        super().on_start()
        self.etags: dict[str, str] = {}

    def read(self, path: str, name: str) -> None:
        headers = {}
        if self.conditional and path in self.etags:
            headers["If-None-Match"] = self.etags[path]
        response = self.call("GET", path, name, headers=headers)
        if response.headers.get("ETag"):
            self.etags[path] = response.headers["ETag"]

    @task(2)
    def view_dashboard(self) -> None:
        self.read(f"/r/{TOKEN}", "/r/[token]")

    @task(1)
    def replies_grid(self) -> None:
        self.read(f"/r/{TOKEN}/replies", "/r/[token]/replies")

    @task(1)
    def replies_second_page(self) -> None:
        self.read(f"/r/{TOKEN}/replies?page=2", "/r/[token]/replies?page=2")
