"""The PrefEval importer (``dataset/prefeval.py``, ``docs/importers.md``):
invented generation result files in ``tests/data/importers/prefeval/`` in
the three forms (explicit, choice-based, persona-driven), converted by the
CLI and the upload page, every item converted or reported with the field
at fault, the filler turns recorded by count and source, not inlined."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from dataset.convert import detect_file
from dataset.importers import Options, Skipped
from dataset.prefeval import prefeval, run_of

FOLDER = Path(__file__).parents[1] / "data" / "importers" / "prefeval"
EXPLICIT = FOLDER / "error_demo_travel_restaurant_5interturn.json"
CHOICE = FOLDER / "demo_travel_activities_2interturn.json"
PERSONA = FOLDER / "demo_travel_transportation_10interturn.json"


def items(path: Path) -> list[dict]:
    return json.loads(path.read_text("utf-8"))


def test_the_three_forms_convert_through_the_cli(app_factory, tmp_path):
    out = tmp_path / "p.jsonl"
    runner = app_factory().test_cli_runner()
    args = ["convert", str(FOLDER), "--out", str(out), "--profile", "-"]
    result = runner.invoke(args=args)
    assert result.exit_code == 0, result.stderr
    assert "detected layout prefeval" in result.stderr
    # the empty answer and the benchmark file's item (no answer) are reported
    assert (f"{EXPLICIT}: skipped record 2: response_to_q: empty") in result.stderr
    assert (
        f"{FOLDER / 'travel_hotel.json'}: skipped record 1: response_to_q: missing"
        in (result.stderr)
    )
    assert "3 sessions converted, 2 records skipped; valid" in result.stdout
    sessions = {
        s["session_id"]: s for s in map(json.loads, out.read_text("utf-8").splitlines())
    }
    assert sorted(sessions) == [
        "choice-based/travel_activities/2turn/0",
        "explicit/travel_restaurant/5turn/0",
        "persona-driven/travel_transportation/10turn/0",
    ]
    # the method is the model named in the file
    assert {m for s in sessions.values() for m in s["rounds"][0]["responses"]} == {
        "demo"
    }


def test_explicit_the_preference_is_the_profile_and_the_first_turn():
    [item, _] = items(EXPLICIT)
    s = prefeval(item, 1, Options(source=EXPLICIT.name))
    assert s["user_profile"] == item["preference"]
    [round_] = s["rounds"]
    assert round_["user_message"] == item["question"]
    # the benchmark judge's verdicts ride on the reply as a recorded judge
    [reply] = round_["responses"].values()
    assert reply["text"] == item["response_to_q"]
    assert reply["judges"] == {
        "PrefEval-judge": {
            check: {"value": int(found["answer"] == "Yes"), "scale": [0, 1]}
            for check, found in item["evaluation_error_analysis"].items()
        }
    }
    assert s["meta"]["history"] == [
        {"speaker": "user", "text": item["preference"]},
        {"speaker": "assistant", "text": item["response_to_pref"]},
    ]
    assert s["meta"]["inter_turns"] == {
        "count": 5,
        "source": "filtered_inter_turns.json",
    }
    # the benchmark judge's verdicts are kept, never a human label
    kept = s["meta"]["record"]
    assert kept["evaluation_error_analysis"] == item["evaluation_error_analysis"]
    assert "human" not in json.dumps(s["rounds"])
    assert "hidden_preference" not in s["meta"]
    assert s["meta"]["question"] == item["question"]


def test_implicit_forms_hide_the_preference_and_keep_the_scripted_turns():
    [choice] = items(CHOICE)
    s = prefeval(choice, 1, Options(source=CHOICE.name, profile="a traveller"))
    assert s["user_profile"] == "a traveller"  # choice-based gives no persona
    assert s["meta"]["hidden_preference"] == choice["preference"]
    assert [t["speaker"] for t in s["meta"]["history"]] == [
        "user",
        "assistant",
        "user",
        "assistant",
    ]
    assert all(t["scripted"] for t in s["meta"]["history"])
    assert s["meta"]["record"]["aligned_op"] == "A quiet garden walk"
    [persona] = items(PERSONA)
    p = prefeval(persona, 1, Options(source=PERSONA.name))
    assert p["user_profile"] == persona["persona"]
    # turns in their numbered order, not the file's
    assert p["meta"]["history"][0]["text"] == persona["conversation"]["0"]["user"]
    assert p["meta"]["form"] == "persona-driven"
    assert p["meta"]["inter_turns"]["count"] == 10


@pytest.mark.parametrize(
    ("path", "change", "why"),
    [
        (EXPLICIT, lambda r: r.pop("preference"), r"^preference: missing"),
        (EXPLICIT, lambda r: r.update(question=" "), r"^question: missing, empty"),
        (EXPLICIT, lambda r: r.update(response_to_q=None), r"^response_to_q: missing"),
        (
            EXPLICIT,
            lambda r: r.update(response_to_pref=3),
            r"^response_to_pref: not text",
        ),
        (
            CHOICE,
            lambda r: r["conversation"].pop("user_selection"),
            r"^conversation\.user_selection: missing",
        ),
        (
            PERSONA,
            lambda r: r.update(conversation={}),
            r"^conversation: missing, empty",
        ),
        (
            PERSONA,
            lambda r: r["conversation"].update({"x": {}}),
            r"^conversation\.x: not a numbered turn",
        ),
        (
            PERSONA,
            lambda r: r["conversation"].update({"2": "hi"}),
            r"^conversation\.2: not an object",
        ),
        (
            PERSONA,
            lambda r: r["conversation"]["0"].pop("assistant"),
            r"^conversation\.0\.assistant: missing",
        ),
        (CHOICE, lambda r: None, r"^no system message or persona"),
    ],
)
def test_every_bad_item_is_reported_with_the_field_at_fault(path, change, why):
    item = copy.deepcopy(items(path)[0])
    change(item)
    with pytest.raises(Skipped, match=why):
        prefeval(item, 1, Options(source=path.name))


def test_the_file_name_gives_model_topic_and_filler_turns():
    assert run_of("error_gpt_4o_travel_hotel_30interturn.json") == {
        "model": "gpt_4o",
        "topic": "travel_hotel",
        "turns": 30,
    }
    assert run_of("claude3s_lifestyle_fit_2turn.json")["turns"] == 2
    item = items(EXPLICIT)[0]
    s = prefeval(item, 4, Options(source="answers.json", method="Ours"))
    assert s["session_id"] == "explicit/topic/?turn/3"
    assert s["meta"]["inter_turns"]["count"] is None
    assert list(s["rounds"][0]["responses"]) == ["Ours"]


def test_the_upload_page_converts_a_generation_file(app_factory):
    client = app_factory().test_client()

    def post(url: str, **form):
        with PERSONA.open("rb") as stream:
            data = {"file": (stream, PERSONA.name), **form}
            return client.post(url, data=data, content_type="multipart/form-data")

    assert post("/api/v1/validate").get_json()["looks_like"] == "prefeval"
    converted = post("/api/v1/convert", **{"from": "prefeval", "method": "Ours"})
    assert converted.status_code == 200
    [session] = map(json.loads, converted.get_data(as_text=True).splitlines())
    assert session["session_id"] == "persona-driven/travel_transportation/10turn/0"
    assert list(session["rounds"][0]["responses"]) == ["Ours"]


def test_detection():
    assert detect_file(EXPLICIT) == detect_file(CHOICE) == "prefeval"
    assert detect_file(FOLDER / "travel_hotel.json") == "prefeval"


def test_a_folder_of_nested_result_files_converts(app_factory, tmp_path):
    """PrefEval nests its results (<form>/generation_results/<method>/<topic>/);
    a folder stands for the files in its subfolders too, hidden ones left out."""
    source = tmp_path / "src"
    nested = source / "benchmark_results" / "explicit" / "remind" / "travel"
    nested.mkdir(parents=True)
    (nested / EXPLICIT.name).write_bytes(EXPLICIT.read_bytes())
    hidden = source / ".cache"
    hidden.mkdir()
    (hidden / "notes.json").write_text('{"x": 1}', "utf-8")
    out = tmp_path / "p.jsonl"
    runner = app_factory().test_cli_runner()
    result = runner.invoke(args=["convert", str(source), "--out", str(out)])
    assert result.exit_code == 0, result.stderr
    assert "1 sessions converted, 1 records skipped; valid" in result.stdout
    # files of two layouts are refused, each layout named with a file in it
    other = Path(__file__).parents[1] / "data" / "importers" / "aloe.jsonl"
    (nested / "aloe.jsonl").write_bytes(other.read_bytes())
    mixed = runner.invoke(args=["convert", str(source), "--out", str(out)])
    assert mixed.exit_code == 2
    assert "different layouts: aloe (" in mixed.stderr and "prefeval (" in mixed.stderr


def test_items_match_by_question_across_forms_and_runs():
    """PrefEval's item i is the same preference in the explicit and implicit
    files and every run of a topic, but 4 of travel_restaurant's 56
    preference strings are reworded between files: the item's key is its
    question. The judge's checks read the preference from meta.reference,
    stated (explicit) or hidden (implicit) alike."""
    [explicit, _] = items(EXPLICIT)
    reworded = {
        **copy.deepcopy(explicit),
        "preference": explicit["preference"] + " Really.",
        "question": "  " + explicit["question"].upper() + " ",
    }
    a = prefeval(explicit, 1, Options(source=EXPLICIT.name))
    b = prefeval(reworded, 1, Options(source="demo_travel_restaurant_10interturn.json"))
    assert a["meta"]["item_key"] == b["meta"]["item_key"]
    assert a["meta"]["reference"] != b["meta"]["reference"]
    [persona] = items(PERSONA)
    p = prefeval(persona, 1, Options(source=PERSONA.name))
    assert p["meta"]["item_key"] != a["meta"]["item_key"]  # another question
    assert (
        p["meta"]["reference"]
        == persona["preference"]
        == p["meta"]["hidden_preference"]
    )
    assert a["meta"]["reference"] == explicit["preference"]


def test_each_method_folder_is_its_own_method(app_factory, tmp_path):
    """PrefEval keeps each method's results in its own folder
    (<form>/generation_results/<method>/<topic>/): converting a folder with
    zero-shot and remind runs of the same model gives model x method, and the
    same item of the two runs two sessions (before: one method 'demo', the
    second file's ids already taken and made from record numbers)."""
    source = tmp_path / "benchmark_results" / "explicit" / "generation_results"
    for task in ("remind", "zero-shot"):
        folder = source / task / "travel_restaurant"
        folder.mkdir(parents=True)
        (folder / EXPLICIT.name).write_bytes(EXPLICIT.read_bytes())
    out = tmp_path / "p.jsonl"
    runner = app_factory().test_cli_runner()
    result = runner.invoke(args=["convert", str(tmp_path), "--out", str(out)])
    assert result.exit_code == 0, result.stderr
    assert "already used" not in result.stderr
    sessions = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    assert sorted(s["session_id"] for s in sessions) == [
        "explicit/remind/travel_restaurant/5turn/0",
        "explicit/zero-shot/travel_restaurant/5turn/0",
    ]
    assert sorted(m for s in sessions for m in s["rounds"][0]["responses"]) == [
        "demo-remind",
        "demo-zero-shot",
    ]
