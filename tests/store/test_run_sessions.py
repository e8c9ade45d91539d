"""The session index of a run (store/run_sessions.py): each session's place
in the upload and its byte span, recorded once, read a page at a time."""

from store.run_sessions import SessionQueries
from tests.pipeline.test_progress import planned_run


def test_sessions_are_paged_in_file_order_and_recorded_once(any_storage):
    assert isinstance(any_storage.chunks, SessionQueries)
    run = planned_run(any_storage)
    spans = [(0, "b", 0, 120), (1, "a", 120, 300), (2, "c", 300, 310)]
    any_storage.chunks.record_sessions(run.id, spans)
    any_storage.chunks.record_sessions(run.id, [(0, "b", 0, 999)])  # redelivered
    assert any_storage.chunks.count_sessions(run.id) == 3
    assert any_storage.chunks.sessions_page(run.id, 0, 2) == ["b", "a"]
    assert any_storage.chunks.sessions_page(run.id, 2, 2) == ["c"]
    assert any_storage.chunks.session_span(run.id, "b") == (0, 120)
    assert any_storage.chunks.session_span(run.id, "missing") is None
    any_storage.chunks.record_sessions(run.id, [])  # nothing to record
    assert any_storage.chunks.count_sessions(run.id) == 3
