"""Judge exchanges are stored once per distinct prompt and reply (issue 57,
finding 7): a run whose verdicts all come from the cache stores references
to the text its first run stored, none of its own; the exchange page reads
the shared text; deleting a run keeps the text another run points to, and
the last run's deletion takes it (``store/exchange_models.py``,
``store/deletion.py``)."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest
from markupsafe import escape
from sqlalchemy import inspect, text

from store import migrate
from store.replies import write_exchanges
from store.storage import Storage
from testing.judge_server import ScriptedJudge
from tests.pipeline_support import base_config, submit, wait_for

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_data.jsonl"
TABLES = ("judge_exchanges", "judge_exchange_texts")


def stored_text(engine) -> tuple[int, int]:
    """(rows, characters) of prompt and reply text the exchange tables
    hold; a row holding neither (a reference) counts for nothing."""
    rows = chars = 0
    present = set(inspect(engine).get_table_names())
    with engine.connect() as conn:
        for table in (name for name in TABLES if name in present):
            for messages, reply in conn.execute(
                text(f"SELECT messages, reply FROM {table}")
            ):
                if messages is None and reply is None:
                    continue
                if not isinstance(messages, str):
                    messages = json.dumps(messages, ensure_ascii=False)
                rows += 1
                chars += len(messages) + len(reply or "")
    return rows, chars


def exchange_page(app, run, row) -> str:
    query = (
        f"session_id={row.session_id}&round={row.round}&method={row.method}"
        f"&judge={row.judge}&metric={row.metric}"
    )
    page = app.test_client().get(f"/r/{run.token}/replies/exchange?{query}")
    assert page.status_code == 200
    return page.get_data(True)


def shows(page: str, exchange: dict) -> bool:
    """Whether the page shows the exchange's prompt and raw reply."""
    prompt = exchange["messages"][-1]["content"]
    return (
        'data-testid="exchange-reply"' in page
        and str(escape(exchange["reply"])) in page
        and str(escape(prompt)) in page
    )


@pytest.fixture
def site(tmp_path, any_database_url):
    from tests.conftest import stop_embedded
    from tests.worker_support import create_test_app

    app = create_test_app(
        {
            **base_config(tmp_path),
            "DATABASE_URL": any_database_url,
            "DB_AUTO_UPGRADE": True,
            "REDIS_URL": None,
            "WATCHDOG_INTERVAL_S": 3600,
        }
    )
    yield app, app.extensions["storage"]
    stop_embedded(app)
    app.extensions["storage"].engine.dispose()


def test_a_run_from_the_cache_stores_no_exchange_text(site):
    app, storage = site
    with ScriptedJudge() as judge:
        first_id = submit(app, SAMPLE, judge, suites=["alignment", "quality"])
        wait_for(app, first_id)
        after_first = stored_text(storage.engine)
        # other suites: not a reuse of the first run, its verdicts all cached
        second_id = submit(app, SAMPLE, judge, suites=["alignment"])
        wait_for(app, second_id)
    first, second = storage.runs.get_run(first_id), storage.runs.get_run(second_id)
    assert first.status == second.status == "done"
    assert first.judge_calls > 0 and after_first[1] > 0
    assert second.judge_calls == 0 and second.cache_hits > 0
    assert stored_text(storage.engine) == after_first, "no new prompt or reply text"

    judged = storage.rows.rows(second.id, metric="al")
    assert judged
    row = judged[0]
    key = (row.session_id, row.round, row.method)
    [kept] = [
        found
        for found in storage.replies.exchanges_of(first.id, key)
        if "al" in found["metrics"]
    ]
    [again] = [
        found
        for found in storage.replies.exchanges_of(second.id, key)
        if "al" in found["metrics"]
    ]
    assert again["cached"] and not kept["cached"]
    assert (again["messages"], again["reply"]) == (kept["messages"], kept["reply"])
    assert shows(exchange_page(app, second, row), kept)

    storage.runs.delete_run(first, app.config["UPLOAD_FOLDER"])
    assert storage.replies.exchanges_of(first.id, key) == []
    assert shows(exchange_page(app, second, row), kept), "still pointed to"
    assert stored_text(storage.engine)[0] > 0
    storage.runs.delete_run(second, app.config["UPLOAD_FOLDER"])
    assert stored_text(storage.engine) == (0, 0), "nothing points to it any more"


EXCHANGE = {
    "session_id": "s",
    "round": 1,
    "method": "A",
    "judge": "j",
    "metric": "al",
    "seq": 0,
    "metrics": ["al"],
    "mode": "alignment",
    "prompt_version": "alignment_v1",
    "sample": 0,
    "messages": [{"role": "user", "content": "哪一个? " * 50}],
    "reply": "Total: \\boxed{80}",
    "status": "ok",
    "cached": False,
}


def new_run(storage, name: str = "x"):
    return storage.runs.create_run(
        file_name=f"{name}.jsonl",
        file_sha256="0" * 64,
        upload_id=name,
        sessions=1,
        rounds=1,
        methods=["A"],
        suites=["alignment"],
        total=1,
    )


def test_a_chunk_written_again_keeps_no_text_it_replaced(any_storage, tmp_path):
    """A chunk tried again replaces its exchanges: the text only the
    replaced ones used goes, the text another still uses stays."""
    storage = any_storage
    run = new_run(storage)
    a, b = EXCHANGE, {**EXCHANGE, "method": "B"}  # one prompt, one reply

    def write(*exchanges):
        with storage.engine.begin() as conn:
            write_exchanges(conn, storage.replies.database, run.id, exchanges)

    def replies():
        return [
            found["reply"]
            for method in ("A", "B")
            for found in storage.replies.exchanges_of(run.id, ("s", 1, method))
        ]

    write(a, b)
    assert stored_text(storage.engine)[0] == 1, "stored once"
    redone = "Total: \\boxed{60}"
    write({**a, "reply": redone})
    assert replies() == [redone, a["reply"]]
    assert stored_text(storage.engine)[0] == 2, "B still points to the first"
    write({**b, "reply": redone})
    assert replies() == [redone, redone]
    assert stored_text(storage.engine)[0] == 1, "nothing points to the first"
    storage.runs.delete_run(run, tmp_path)
    assert stored_text(storage.engine) == (0, 0)


@pytest.mark.postgres
def test_a_deletion_waits_for_a_chunk_naming_the_same_text(postgres_storage, tmp_path):
    """Deleting a run while another run's chunk is storing an exchange with
    the same text: the deletion waits for the chunk's transaction, then
    sees its exchange and keeps the text (neither fails)."""
    storage = postgres_storage
    first, second = new_run(storage, "a"), new_run(storage, "b")
    database = storage.replies.database
    with storage.engine.begin() as conn:
        write_exchanges(conn, database, first.id, [EXCHANGE])
    failed: list[BaseException] = []

    def delete_first() -> None:
        try:
            storage.runs.delete_run(first, tmp_path)
        except BaseException as error:
            failed.append(error)

    deletion = threading.Thread(target=delete_first)
    with storage.engine.connect() as writing:
        with writing.begin():
            write_exchanges(writing, database, second.id, [EXCHANGE])
            writer = writing.execute(text("SELECT pg_backend_pid()")).scalar_one()
            deletion.start()
            waiting = text(
                "SELECT count(*) FROM pg_stat_activity"
                " WHERE :writer = ANY(pg_blocking_pids(pid))"
            )
            # the deletion is seen waiting on the chunk's transaction, or the
            # chunk commits after 10 s anyway: what must hold is the end
            # (neither fails, the text is kept). Once in an idle CI run the
            # watch never saw it blocked by the writer's pid in 60 s (cause
            # not found: issue 57's closing note), so seeing it is not asserted
            deadline = time.monotonic() + 10
            with storage.engine.connect() as watch:
                while not watch.execute(waiting, {"writer": writer}).scalar_one():
                    assert failed == [], failed
                    if not deletion.is_alive() or time.monotonic() > deadline:
                        break
                    time.sleep(0.05)
        deletion.join(60)
    assert not deletion.is_alive() and failed == []
    assert storage.replies.exchanges_of(first.id, ("s", 1, "A")) == []
    [kept] = storage.replies.exchanges_of(second.id, ("s", 1, "A"))
    assert (kept["messages"], kept["reply"]) == (
        EXCHANGE["messages"],
        EXCHANGE["reply"],
    )


def test_exchanges_stored_before_the_upgrade_are_shown(any_database_url, tmp_path):
    """A run's exchanges stored with their text in their own row (before
    0026) are read as they were, and deleting another run leaves them."""
    storage = Storage(any_database_url)
    migrate.upgrade(storage.engine, "0025")
    with storage.engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO runs (id, token, manage_token, status, created_at, file_name,"
                " file_sha256, upload_id, sessions, rounds, methods, suites, options,"
                " done, total, judge_calls, cache_hits, prompt_tokens, completion_tokens)"
                " VALUES ('old', 'tok', 'man', 'done', '2026-12-01', 'x.jsonl', :sha, 'u',"
                " 1, 1, '[\"A\"]', '[\"alignment\"]', '{}', 1, 1, 1, 0, 1, 1)"
            ),
            {"sha": "0" * 64},
        )
        conn.execute(
            text(
                "INSERT INTO judge_exchanges (run_id, session_id, round, method, judge,"
                " metric, seq, metrics, mode, prompt_version, sample, messages, reply,"
                " status, cached) VALUES ('old', 's', 1, 'A', 'j', 'al', 0, :metrics,"
                " 'alignment', 'alignment_v1', 0, :messages, :reply, 'ok', :cached)"
            ),
            {
                "metrics": json.dumps(EXCHANGE["metrics"]),
                "cached": False,
                "messages": json.dumps(EXCHANGE["messages"], ensure_ascii=False),
                "reply": EXCHANGE["reply"],
            },
        )
    storage.upgrade()
    [found] = storage.replies.exchanges_of("old", ("s", 1, "A"))
    assert (found["messages"], found["reply"]) == (
        EXCHANGE["messages"],
        EXCHANGE["reply"],
    )
    run = new_run(storage)  # the same text stored the new way, then deleted
    with storage.engine.begin() as conn:
        write_exchanges(conn, storage.replies.database, run.id, [EXCHANGE])
    storage.runs.delete_run(run, tmp_path)
    [still] = storage.replies.exchanges_of("old", ("s", 1, "A"))
    assert still == found
    storage.engine.dispose()
