"""The judge suite the contributor drill adds (``tests/test_contributing.py``):
"politeness", one folder holding its module and its prompt, and its test,
which evaluates the sample file end to end against the scripted judge. The
scripted judge has never heard of it: it answers in the form the suite's
mode declares (``testing/judge_forms.py``)."""

POLITENESS = '''"""Politeness: the judge rates how polite each reply is, from 1 to 5
(the contributor drill's judge suite; its prompt is in this folder)."""

from functools import partial
from pathlib import Path

from metrics.judging import Batch, Verdict, judge_items, read_prompt
from metrics.notes import note
from metrics.rows import result_row, session_summary
from metrics.suite import (Chart, JudgeMode, JudgeUse, Metric, Panel, Suite, _l,
                           series)
from metrics.verdicts import Kind, NoVerdict, read

PROMPT = read_prompt(Path(__file__).parent / "prompts" / "politeness_v1.txt")
FORMAT = "Reasoning: <one sentence>\\nScore: <1 to 5>"
KIND = Kind.score(1, 5, integer=True).asking(FORMAT)


def parse(text):
    """The verdict of a reply, by the one grammar of ``metrics.verdicts``.

    >>> parse("Reasoning: courteous.\\\\nScore: 4").score
    4.0
    """
    found = read(text, KIND)
    return found if isinstance(found, NoVerdict) else Verdict(found)


MODE = JudgeMode("politeness", PROMPT.version, parse, FORMAT, template=PROMPT,
                 verdict=KIND)


def outcome_row(key, outcomes):
    [outcome] = outcomes
    if outcome.status != "ok":
        return [result_row(key, "politeness", None, outcome.status, outcome.note)]
    return [result_row(key, "politeness", outcome.verdict["score"])]


def run(sessions, methods, judge, options):
    """One judge request per reply; without a judge, ``not_configured``."""
    rows, batch = [], Batch(judge)
    for session in sessions:
        for round_ in session["rounds"]:
            for method in methods:
                key = {"session_id": session["session_id"],
                       "round": round_["round"], "method": method}
                if judge is None:
                    rows.append(result_row(key, "politeness", None,
                                           note=note("no_judge")))
                    continue
                items = judge_items(MODE, 1, user_message=round_["user_message"],
                                    response=round_["responses"][method]["text"])
                rows += batch.add(items, partial(outcome_row, key))
    return rows + batch.flush()


def summarize(rows, methods):
    found = session_summary(rows, ["politeness"], methods)
    return {"summary": found.summary, "session_values": found.values}


SUITE = Suite(
    name="politeness",
    label=_l("Politeness"),
    description=_l("How polite the judge finds each reply, from 1 to 5."),
    metrics=(
        Metric("politeness", _l("Politeness"), "row", True, (1.0, 5.0),
               needs_judge=True,
               description=_l("The judge's rating of one reply, 1 to 5.")),
        Metric("politeness_avg", _l("Politeness"), "summary", True, (1.0, 5.0),
               compare="politeness", needs_judge=True),
    ),
    run=run,
    summarize=summarize,
    judge=JudgeUse.REQUIRED,
    modes=(MODE,),
    panel=Panel(charts=(Chart("politeness", "bars", _l("Mean politeness"),
                              "summary", series=series("politeness_avg")),)),
    order=91,
)
'''

PROMPT = """# system
You are a careful reader of conversations. You rate how polite one assistant reply is toward the user, from 1 (rude) to 5 (courteous), whatever its content.
# user
## The user's message
$user_message

## The reply to rate
<<<RESPONSE
$response
RESPONSE>>>

Answer exactly in this format:
Reasoning: <one sentence>
Score: <1 to 5>
"""

TEST_POLITENESS = """from pathlib import Path

from metrics import registry
from tests.pipeline_support import FAST_JUDGE, evaluate

SAMPLE = Path(__file__).resolve().parents[3] / "sample_data.jsonl"  # tests/metrics/suites/


def test_the_scripted_judge_scores_every_reply_through_the_suites_mode(
    app_factory, judge_server
):
    app = app_factory(**FAST_JUDGE)
    document = evaluate(app, SAMPLE, judge_server, suites=["politeness"])
    assert document["run"]["status"] == "done"
    rows = [row for row in document["rows"] if row["metric"] == "politeness"]
    assert rows and {row["status"] for row in rows} == {"ok"}
    assert all(1 <= row["value"] <= 5 for row in rows)
    summary = document["summary"]
    assert all(1 <= values["politeness_avg"] <= 5 for values in summary.values())


def test_without_a_judge_politeness_is_not_configured():
    session = {"session_id": "s", "rounds": [{"round": 1, "user_message": "hi",
               "responses": {"M": {"text": "Hello."}}}]}
    [row] = registry.get("politeness").run([session], ["M"], None, {})
    assert row["status"] == "not_configured"
"""
