"""Empty states name the true cause (issue 45), in en, zh and ko: a judge
that answered with nothing readable is not "a judge not configured", and a
metric that cannot apply says why."""

from __future__ import annotations

import pytest

from tests import crafted
from tests.pipeline_support import evaluate


def _page(app, run_id: str, lang: str) -> str:
    token = app.extensions["storage"].runs.get_run(run_id).token
    return app.test_client().get(f"/r/{token}?lang={lang}").get_data(as_text=True)


@pytest.mark.parametrize(
    ("lang", "said"),
    [("en", "values not scored"), ("zh", "个值未能评分"), ("ko", "값이 채점되지 않음")],
)
def test_unreadable_judge_replies_are_not_called_a_missing_judge(
    app_factory, tmp_path, judge_server, lang, said
):
    garbage = [f"reply {k} [[fault=garbage]]" for k in range(3)]
    sessions = [crafted.session("a", {"A": garbage, "B": garbage})]
    app = app_factory()
    path = crafted.write(tmp_path / "g.jsonl", sessions)
    document = evaluate(app, path, judge_server, suites=["alignment"])
    assert document["run"]["status"] == "failed"  # no reply read (issue 56)
    page = _page(app, document["run"]["id"], lang)
    assert said in page
    assert "needs a configured judge" not in page


def test_a_metric_that_cannot_apply_says_why(app_factory, tmp_path):
    chinese = ["你好，我们去北京吧。", "今天天气很好。"]
    session = crafted.session("zh", {"A": chinese, "B": chinese})
    session["sample_dialogues"] = ["我喜欢爬山。"]
    app = app_factory()
    path = crafted.write(tmp_path / "zh.jsonl", [session])
    document = evaluate(app, path, None, suites=["style"])
    page = _page(app, document["run"]["id"], "en")
    causes = page.split('data-testid="panel-causes">', 1)[1].split("</ul>", 1)[0]
    assert "4 values not scored: the sample dialogues are mostly non-Latin" in causes
