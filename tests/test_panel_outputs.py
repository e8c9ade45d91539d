"""A judge panel shown as a panel (issue 45): curves pool the judges per
item, so n counts sessions, and every paper output names the judges and
how they are pooled, with each judge's values beside the panel mean."""

from __future__ import annotations

import csv
import io

import pytest

from tests import crafted
from tests.pipeline_support import evaluate

JUDGES = ["judge-a", "judge-b"]


@pytest.fixture
def panel_run(app_factory, tmp_path, judge_server):
    sessions = [
        crafted.session(f"s{n}", {
            "Base": crafted.scores([40 + n] * 3, [0, 1, 0]),
            "Ours": crafted.scores([50 + n, 60 + n, 70 - n], [1, 1, 0]),
        })
        for n in range(9)
    ]  # fmt: skip
    app = app_factory(JUDGE_MODELS=",".join(JUDGES))
    path = crafted.write(tmp_path / "panel.jsonl", sessions)
    document = evaluate(app, path, judge_server, suites=["alignment"],
                        judge_models=JUDGES)  # fmt: skip
    run = app.extensions["storage"].runs.get_run(document["run"]["id"])
    return app, run, document


def test_a_panel_curve_counts_sessions_not_verdicts(panel_run):
    _, _, document = panel_run
    assert document["run"]["status"] == "done"
    for method in ("Base", "Ours"):
        assert [p["n"] for p in document["curves"]["al"][method]] == [9, 9, 9]
    assert document["run"]["judge"]["models"] == JUDGES


def test_every_paper_output_names_the_panel(panel_run):
    app, run, _ = panel_run
    client = app.test_client()

    def get(name: str) -> str:
        return client.get(f"/r/{run.token}/{name}").get_data(as_text=True)

    rows = list(csv.DictReader(io.StringIO(get("summary.csv"))))
    judged = {(r["method"], r["metric"]): r["judge"] for r in rows}
    assert judged[("Ours", "al_avg")] == "panel mean (judge-a, judge-b)"
    assert judged[("Ours", "al_avg@judge-a")] == "judge-a"
    assert judged[("Ours", "binary_rate@judge-b")] == "judge-b"
    for text in (get("export.md"), get("export.tex"), get("methods.txt")):
        assert "judge-a" in text and "judge-b" in text
        assert "mean of the panel's judges' scores" in text
    assert "| Method | judge-a | judge-b | panel mean |" in get("export.md")


def test_human_labels_belong_to_no_judge_and_stand_beside_each(
    app_factory, tmp_path, judge_server
):
    sessions = [
        crafted.session(f"h{n}", {
            method: [{"text": f"reply {k} [[al={40 + 10 * k + n}]] [[binary=1]]",
                      "human": {"al": 40 + 10 * k + n, "binary": 1}}
                     for k in range(3)]
            for method in ("Base", "Ours")
        })
        for n in range(3)
    ]  # fmt: skip
    app = app_factory(JUDGE_MODELS=",".join(JUDGES))
    path = crafted.write(tmp_path / "human.jsonl", sessions)
    document = evaluate(app, path, judge_server, suites=["alignment"],
                        judge_models=JUDGES)  # fmt: skip
    labels = [r for r in document["rows"] if r["metric"] == "human_al"]
    assert len(labels) == 3 * 3 * 2  # once per reply, not once per judge
    assert all(not r["judge"] for r in labels)
    scored = {r["judge"] for r in document["rows"] if r["metric"] == "al"}
    assert scored == set(JUDGES)
    human = document["judge_validity"]["human"]
    assert set(human) == set(JUDGES)
    assert all(human[judge]["n_al"] == 18 for judge in JUDGES)
