"""A long session is judged within the history window: the scripted judge
sees no prompt longer than the window plus the prompt itself, the dropped
turns are recorded on the rows and in the run header."""

from __future__ import annotations

from testing.judge_server import ScriptedJudge
from tests import crafted
from tests.pipeline_support import evaluate

ROUNDS, WINDOW = 300, 3000


def test_a_300_round_session_is_judged_within_the_window(app_factory, tmp_path):
    replies = [
        f"Round {k}: " + "a warm and specific reply. " * 4 for k in range(ROUNDS)
    ]
    session = crafted.session("long", {"Ours": replies, "Base": replies[::-1]})
    path = crafted.write(tmp_path / "long.jsonl", [session])
    with ScriptedJudge() as judge:
        app = app_factory(
            JUDGE_API_URL=judge.url,
            JUDGE_MODEL="scripted",
            MAX_ROUNDS_PER_SESSION=ROUNDS,
            JUDGE_HISTORY_CHARS=WINDOW,
            JUDGE_CONCURRENCY=8,
        )
        document = evaluate(app, path, judge, suites=["alignment"])
        longest = judge.state.max_prompt_chars
    assert document["run"]["status"] == "done"
    assert judge.state.calls == ROUNDS * 2 * 2
    # the window plus the fixed prompt, profile, message and response
    assert WINDOW < longest < WINDOW + 2500
    al = [r for r in document["rows"] if r["metric"] == "al"]
    assert len(al) == ROUNDS * 2
    counts = document["run"]["counts"]
    assert counts["history_truncated"] > ROUNDS  # most rounds of both methods
    assert document["run"]["judge"]["history_chars"] == WINDOW
    storage = app.extensions["storage"]
    late = storage.rows.rows(
        document["run"]["id"], session_id="long", round=ROUNDS, metric="al"
    )
    assert late[0].detail["history_truncated"] > 200
    early = storage.rows.rows(
        document["run"]["id"], session_id="long", round=1, metric="al"
    )
    assert "history_truncated" not in early[0].detail
