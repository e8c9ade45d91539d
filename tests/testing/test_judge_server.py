"""The scripted judge's server (testing/judge_server.py)."""

from __future__ import annotations

import pytest

from testing.judge_server import ScriptedJudge


@pytest.mark.parametrize("gone", [BrokenPipeError, ConnectionResetError])
def test_a_client_that_hung_up_prints_no_traceback(capsys, gone):
    with ScriptedJudge() as judge:
        try:
            raise gone(32, "Broken pipe")
        except ConnectionError:
            judge.server.handle_error(None, ("127.0.0.1", 1))
    assert capsys.readouterr().err == ""


def test_any_other_error_is_still_printed(capsys):
    with ScriptedJudge() as judge:
        try:
            raise ValueError("a fault of the judge's own")
        except ValueError:
            judge.server.handle_error(None, ("127.0.0.1", 1))
    assert "a fault of the judge's own" in capsys.readouterr().err
