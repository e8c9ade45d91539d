"""The CLI's results document with its rows encoded while the worker
finalizes (cli/early_rows.py): the same bytes, and encoded only once the
rows are final."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import update

from cli.early_rows import EarlyRows
from store.models import Run, utcnow


@pytest.fixture
def finished(app, runner, tmp_path):
    out = tmp_path / "results.json"
    result = runner.invoke(
        args=["evaluate", "sample_data.jsonl", "--suite", "quality", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    run_id = json.loads(out.read_text(encoding="utf-8"))["run"]["id"]
    return app.extensions["storage"].get_run(run_id)


def _as_finalizing(storage, run_id: str, claimed: bool) -> None:
    """The run back where a worker aggregates it (claimed) or before."""
    values = {"status": "running", "finalizing_at": utcnow() if claimed else None}
    with storage.engine.begin() as conn:
        conn.execute(update(Run).where(Run.id == run_id).values(**values))


def _ended(storage, run) -> None:
    with storage.engine.begin() as conn:
        conn.execute(update(Run).where(Run.id == run.id).values(status=run.status))


def test_rows_encoded_while_finalizing_make_the_same_document(app, finished, tmp_path):
    service, storage = app.extensions["runs"], app.extensions["storage"]
    streamed = "".join(service.results_chunks(finished, indent=2))
    _as_finalizing(storage, finished.id, claimed=True)
    folder = tmp_path / "out"
    folder.mkdir()
    early = EarlyRows(service, finished.id, folder)
    early.poll(finished.total, finished.total)
    assert early.file is not None  # encoded before the run ended
    _ended(storage, finished)
    assert "".join(early.document(finished, indent=2)) == streamed
    assert early.file.closed
    assert list(folder.iterdir()) == []  # an anonymous file: nothing left


@pytest.mark.parametrize("claimed, done", [(False, "all"), (True, "all but one")])
def test_rows_are_not_encoded_before_they_are_final(app, finished, claimed, done):
    service, storage = app.extensions["runs"], app.extensions["storage"]
    _as_finalizing(storage, finished.id, claimed=claimed)
    early = EarlyRows(service, finished.id)
    total = finished.total
    early.poll(total if done == "all" else total - 1, total)
    assert early.file is None
    _ended(storage, finished)
    # the end streams them as before
    assert "".join(early.document(finished, indent=2)) == "".join(
        service.results_chunks(finished, indent=2)
    )


def test_a_failed_early_encoding_leaves_the_rows_to_the_end(app, finished, monkeypatch):
    service, storage = app.extensions["runs"], app.extensions["storage"]
    _as_finalizing(storage, finished.id, claimed=True)

    def full_disk(run_id):
        yield "\n"
        raise OSError(28, "No space left on device")

    early = EarlyRows(service, finished.id)
    with monkeypatch.context() as patched:
        patched.setattr(service, "rows_text", full_disk)
        early.poll(finished.total, finished.total)
        early.poll(finished.total, finished.total)  # tried once only
    assert early.file is None
    _ended(storage, finished)
    document = json.loads("".join(early.document(finished, indent=2)))
    assert len(document["rows"]) == storage.count_rows(finished.id) > 0


def test_an_out_folder_that_does_not_exist_leaves_the_rows_to_the_end(
    app, finished, tmp_path
):
    service, storage = app.extensions["runs"], app.extensions["storage"]
    _as_finalizing(storage, finished.id, claimed=True)
    early = EarlyRows(service, finished.id, tmp_path / "missing")
    early.poll(finished.total, finished.total)
    assert early.file is None
    _ended(storage, finished)
    assert "".join(early.document(finished, indent=2)) == "".join(
        service.results_chunks(finished, indent=2)
    )
