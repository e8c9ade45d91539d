"""Importers (``dataset/importers/``, ``docs/importers.md``): each layout's
sample file, written by hand in that layout, converted by the CLI into a
file that validates, with the mapping checked field by field; and through
the API's ``/api/v1/convert`` (``web/views/conversion.py``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dataset.convert import detect_file
from tests.pipeline_support import evaluate

SAMPLES = Path(__file__).parents[1] / "data" / "importers"
FILES = {
    "sharegpt": "sharegpt.json",
    "openai-messages": "openai_messages.jsonl",
    "personachat": "personachat.csv",
    "lenient": "lenient.jsonl",
    "aloe": "aloe.jsonl",  # ../shared/formats/aloe_sample.jsonl
    "personachat-original": "personachat_original.json",
    # invented records in CharacterBench's layout (it publishes no licence)
    "characterbench": "characterbench/engagement_test.json",
    "prefeval": "prefeval/error_demo_travel_restaurant_5interturn.json",
}
# PersonaChat gives no persona of the user: the profile is the user's to give
NEEDS = {"personachat-original": ["--profile", "A reader who keeps pets."]}


def convert(app, layout: str | None, out: Path, *extra: str, source=None):
    """The CLI on a sample; ``layout`` None leaves it to detection."""
    source = source or SAMPLES / FILES[layout]
    named = ["--from", layout] if layout else []
    args = ["convert", *named, str(source), "--out", str(out), *extra]
    result = app.test_cli_runner().invoke(args=args)
    sessions = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    return result, sessions


@pytest.mark.parametrize("layout", sorted(FILES))
def test_each_layout_is_recognized_and_converts_to_a_valid_file(
    app_factory, tmp_path, layout
):
    assert detect_file(SAMPLES / FILES[layout]) == layout
    extra = NEEDS.get(layout, [])
    result, sessions = convert(app_factory(), layout, tmp_path / "out.jsonl", *extra)
    assert result.exit_code == 0, result.stderr
    detected, same = convert(
        app_factory(),
        None,
        tmp_path / "d.jsonl",
        *extra,
        source=SAMPLES / FILES[layout],
    )
    assert f"detected layout {layout}" in detected.stderr
    assert same == sessions
    assert result.stdout.rstrip().endswith("; valid")
    assert sessions


def test_sharegpt_maps_system_to_profile_and_pairs_turns(app_factory, tmp_path):
    result, sessions = convert(
        app_factory(), "sharegpt", tmp_path / "o.jsonl", "--method", "Ours"
    )
    first, second = sessions
    assert first["user_profile"].startswith("Dana, 34")
    assert [(r["round"], r["responses"]["Ours"][:10]) for r in first["rounds"]] == [
        (1, "After a ni"),
        (2, "Then add a"),
    ]
    # two user messages in a row: the first had no reply (missing, not "")
    assert second["rounds"][0]["responses"] == {"Ours": None}
    assert second["rounds"][1]["user_message"] == "Somewhere near the beach, please."
    assert "skipped record 3: no system message" in result.stderr  # never invented
    assert "2 sessions converted, 1 records skipped" in result.stdout


def test_a_profile_option_stands_in_for_a_missing_system_message(app_factory, tmp_path):
    _, sessions = convert(
        app_factory(), "sharegpt", tmp_path / "o.jsonl", "--profile", "unknown user"
    )
    assert [s["session_id"] for s in sessions] == ["sg-1", "sg-2", "sg-3"]
    assert sessions[2]["user_profile"] == "unknown user"


def test_openai_messages_read_parts_metadata_and_null_replies(app_factory, tmp_path):
    _, sessions = convert(app_factory(), "openai-messages", tmp_path / "o.jsonl")
    tom = sessions[1]
    assert (tom["session_id"], tom["user_personality"]) == ("oa-2", "curious, direct")
    assert tom["user_profile"] == "Tom, 19, a first-year physics student."
    assert tom["rounds"][1]["responses"] == {"model": None}


def test_personachat_personas_become_the_profile(app_factory, tmp_path):
    _, [session] = convert(app_factory(), "personachat", tmp_path / "o.jsonl")
    assert session["user_profile"] == (
        "I am a vegan. I love hiking in the Alps. I work as a nurse."
    )
    assert session["meta"] == {"replier_persona": "I am a chef. I have two cats."}
    assert len(session["rounds"]) == 3 and session["rounds"][2]["responses"] == {
        "model": None
    }


def test_lenient_renumbers_and_joins(app_factory, tmp_path):
    _, sessions = convert(app_factory(), "lenient", tmp_path / "o.jsonl")
    assert [r["round"] for r in sessions[0]["rounds"]] == [1, 2]
    assert sessions[0]["user_personality"] == "patient, wry"
    assert sessions[1]["rounds"][0]["round"] == 1


def test_a_converted_file_is_evaluated_end_to_end(app_factory, tmp_path):
    app = app_factory()
    convert(app, "sharegpt", tmp_path / "o.jsonl", "--method", "Ours")
    document = evaluate(app, tmp_path / "o.jsonl", None, suites=["quality"])
    assert document["run"]["status"] == "done"
    assert document["run"]["counts"]["missing"] == 1  # sg-2's unanswered message


def test_bad_options_and_unconvertible_files_exit_2(app_factory, tmp_path):
    app = app_factory()
    runner = app.test_cli_runner()
    source = SAMPLES / FILES["lenient"]
    same = runner.invoke(
        args=["convert", "--from", "lenient", str(source), "--out", str(source)]
    )
    assert same.exit_code == 2 and "must not be the input file" in same.stderr
    wrong = runner.invoke(
        args=[
            "convert",
            "--from",
            "sharegpt",
            str(source),
            "--out",
            str(tmp_path / "o.jsonl"),
        ]
    )
    assert wrong.exit_code == 2 and "no record" in wrong.stderr
    unknown = runner.invoke(
        args=[
            "convert",
            "--from",
            "no-such",
            str(source),
            "--out",
            str(tmp_path / "o.jsonl"),
        ]
    )
    assert unknown.exit_code == 2


def test_the_upload_check_recognizes_a_layout_and_converts_it(app_factory):
    client = app_factory().test_client()
    source = SAMPLES / FILES["sharegpt"]

    def post(url, **form):
        with source.open("rb") as stream:
            data = {"file": (stream, source.name), **form}
            return client.post(url, data=data, content_type="multipart/form-data")

    checked = post("/api/v1/validate").get_json()
    assert checked["valid"] is False and checked["looks_like"] == "sharegpt"
    converted = post("/api/v1/convert", **{"from": "sharegpt"})
    assert converted.status_code == 200
    assert converted.headers["X-Sessions-Converted"] == "2"
    assert converted.headers["X-Records-Skipped"] == "1"
    assert 'filename="sharegpt.jsonl"' in converted.headers["Content-Disposition"]
    lines = converted.get_data(as_text=True).splitlines()
    assert [json.loads(line)["session_id"] for line in lines] == ["sg-1", "sg-2"]
    unknown = post("/api/v1/convert", **{"from": "no-such-layout"})
    assert unknown.status_code == 400
    assert unknown.get_json()["errors"][0]["code"] == "unknown_layout"
    wrong = post("/api/v1/convert", **{"from": "personachat"})
    assert wrong.get_json()["errors"][0]["code"] == "nothing_converted"


@pytest.mark.parametrize("layout", sorted(FILES))
def test_each_layout_uploaded_as_is_gets_the_convert_hint(app_factory, layout):
    source = SAMPLES / FILES[layout]
    with source.open("rb") as stream:
        checked = (
            app_factory()
            .test_client()
            .post(
                "/api/v1/validate",
                data={"file": (stream, source.name)},
                content_type="multipart/form-data",
            )
            .get_json()
        )
    assert checked["valid"] is False and checked["looks_like"] == layout


def test_aloe_keeps_both_replies_and_the_path_the_conversation_took(
    app_factory, tmp_path, judge_server
):
    """ALOE (../shared/formats/aloe.md): the raw quoted profile decoded,
    preferred and rejected as two methods, chosen and the inferred fields
    in meta; then a run makes judge calls on it (it was 'done' with none)."""
    app = app_factory()
    result, sessions = convert(app, "aloe", tmp_path / "o.jsonl")
    assert result.exit_code == 0 and "3 sessions converted" in result.stdout
    first = sessions[0]
    assert first["session_id"] == "aloe-1"  # ALOE's writer gives no id
    assert "3 record(s) carry no session id" in result.stderr
    assert first["user_profile"].startswith("She is a 34-year-old")
    assert not first["user_profile"].endswith(('"', "\n"))
    for turn in (turn for session in sessions for turn in session["rounds"]):
        assert turn["user_message"].strip()
        assert set(turn["responses"]) == {"preferred", "rejected"}
        assert all(reply.strip() for reply in turn["responses"].values())
    chosen = [c for session in sessions for c in session["meta"]["chosen"]]
    assert set(chosen) == {"preferred", "rejected"}  # not always preferred
    assert len(first["meta"]["inferred_profile"]) == len(first["rounds"])
    document = evaluate(app, tmp_path / "o.jsonl", judge_server, suites=["alignment"])
    assert document["run"]["status"] == "done"
    assert document["run"]["counts"]["judge_calls"] > 0


def test_aloe_keeps_a_records_own_session_id_and_reports_the_ids_it_makes(
    app_factory, tmp_path
):
    """Issue 56: a record's own ``session_id`` was replaced by ``aloe-<n>``.
    It is kept; a record without one, or whose id an earlier record took,
    gets ``aloe-<record number>``, and stderr says which."""
    lines = (SAMPLES / FILES["aloe"]).read_text("utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    records[0]["session_id"] = records[2]["session_id"] = "user_001_session_001"
    source = tmp_path / "aloe_ids.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    out = tmp_path / "o.jsonl"
    result, sessions = convert(app_factory(), "aloe", out, source=source)
    assert result.exit_code == 0, result.stderr
    ids = [session["session_id"] for session in sessions]
    assert ids == ["user_001_session_001", "aloe-2", "aloe-3"]
    taken = 'record 3: session id "user_001_session_001" is already used by record 1'
    assert f"{taken}; written as aloe-3" in result.stderr
    made = "1 record(s) carry no session id: ids made from the record number"
    assert f"{made} (aloe-2)" in result.stderr
    assert result.stdout.rstrip().endswith("; valid")


def test_personachat_original_takes_the_profile_from_the_user(app_factory, tmp_path):
    source = SAMPLES / FILES["personachat-original"]
    refused, _ = convert(app_factory(), "personachat-original", tmp_path / "a.jsonl")
    assert refused.exit_code == 2 and "give --profile" in refused.stderr
    _, sessions = convert(
        app_factory(),
        None,
        tmp_path / "b.jsonl",
        *NEEDS["personachat-original"],
        source=source,
    )
    first = sessions[0]
    assert first["meta"]["replier_persona"] == "i like cats . i am a nurse ."
    # the replier spoke first ("__ SILENCE __"): its greeting answers nothing
    assert first["meta"]["opening"] == ["hello , how are you ?"]
    assert [t["user_message"] for t in first["rounds"]] == ["fine . do you have pets ?"]


def test_a_synthetic_persona_chat_line_without_a_speaker_continues_the_turn():
    from dataset.importers import Options, convert_record

    record = {
        "user 1 personas": "I cook.",
        "Best Generated Conversation": "User 1: A recipe?\nUser 2: Sure:\n1. Boil water\n2. Add pasta\n"
        "User 1: Thanks!\nUser 2: Enjoy.",
    }
    session = convert_record("personachat", record, 1, Options())
    assert session["rounds"][0]["responses"]["model"] == (
        "Sure:\n1. Boil water\n2. Add pasta"
    )
    assert len(session["rounds"]) == 2


@pytest.mark.parametrize(
    ("turns", "why"),
    [
        ([("human", "   "), ("gpt", "Hello")], "round 1: the user message is empty"),
        ([("human", "Hi"), ("human", "Anyone?")], "no reply to evaluate"),
        ([("human", "Hi"), ("gpt", "")], "no reply to evaluate"),
    ],
)
def test_a_record_with_an_empty_message_or_no_reply_is_not_converted(turns, why):
    from dataset.importers import Options, Skipped, convert_record

    record = {
        "system": "Ana",
        "conversations": [{"from": role, "value": text} for role, text in turns],
    }
    with pytest.raises(Skipped, match=why):
        convert_record("sharegpt", record, 1, Options())


def test_the_upload_page_converts_with_the_cli_options(app_factory):
    """A ShareGPT file without a system prompt converts once a profile is
    given; what is not converted comes back with its record and reason."""
    client = app_factory().test_client()
    source = SAMPLES / FILES["sharegpt"]

    def post(**form):
        with source.open("rb") as stream:
            data = {"file": (stream, source.name), "from": "sharegpt", **form}
            return client.post(
                "/api/v1/convert", data=data, content_type="multipart/form-data"
            )

    plain = post()
    assert json.loads(plain.headers["X-Skipped"]) == [
        {
            "record": 3,
            "reason": "no system message or persona to use as the user "
            "profile: write one in “User profile, for records that carry none” above "
            "and convert again",
        }
    ]
    given = post(profile="A visitor", method="Ours")
    assert given.headers["X-Sessions-Converted"] == "3"
    sessions = [json.loads(line) for line in given.get_data(as_text=True).splitlines()]
    assert sessions[2]["user_profile"] == "A visitor"
    assert set(sessions[0]["rounds"][0]["responses"]) == {"Ours"}
    aloe = SAMPLES / FILES["personachat-original"]
    with aloe.open("rb") as stream:
        refused = client.post(
            "/api/v1/convert",
            content_type="multipart/form-data",
            data={"file": (stream, aloe.name), "from": "personachat-original"},
        )
    [problem] = refused.get_json()["errors"]
    assert problem["code"] == "nothing_converted"
    assert "User profile" in problem["message"] and "record 1" in problem["message"]


@pytest.mark.parametrize(
    ("lang", "field"),
    [
        ("en", "“User profile, for records that carry none”"),
        ("zh", "“用户画像”"),
        ("ko", "“사용자 프로필”"),
    ],
)
def test_a_conversion_on_the_page_names_the_profile_field_not_a_flag(
    app_factory, lang, field
):
    """Issue 56: the upload page's conversion said '(give --profile)', a
    command-line flag; it names the page's field, in the reader's language
    (the command line still names its flag)."""
    client = app_factory().test_client()

    def post(layout: str):
        source = SAMPLES / FILES[layout]
        with source.open("rb") as stream:
            data = {"file": (stream, source.name), "from": layout}
            url = f"/api/v1/convert?lang={lang}"
            return client.post(url, data=data, content_type="multipart/form-data")

    [problem] = post("personachat-original").get_json()["errors"]
    assert field in problem["message"] and "--profile" not in problem["message"]
    [skipped] = json.loads(post("sharegpt").headers["X-Skipped"])
    assert field in skipped["reason"] and "--profile" not in skipped["reason"]


def test_the_upload_page_lists_the_importers_of_the_registry(app_factory):
    """Issue 60: the upload page's layouts (their titles and the options
    their Convert asks) are the importer registry's, reaching its script as
    JSON; an importer added to ``dataset/importers/`` needs no page edit."""
    import re

    from dataset.importers import IMPORTERS

    page = app_factory().test_client().get("/").get_data(as_text=True)
    found = re.search(
        r'<script type="application/json" id="i18n">(.*?)</script>', page, re.S
    )
    strings = json.loads(found.group(1))
    assert list(strings["layouts"]) == IMPORTERS.names()
    assert strings["layout_options"] == {
        name: list(entry.options) for name, entry in IMPORTERS.items()
    }
    assert strings["layouts"]["sharegpt"] == "ShareGPT"


def test_every_importer_declares_how_its_records_are_recognized():
    """Detection is each importer's own ``detect`` (no if-chain elsewhere):
    every importer declares one, and each sample file here is recognized as
    the layout that names it (``test_each_layout_is_recognized...``)."""
    from dataset.importers import IMPORTERS

    assert set(FILES) <= set(IMPORTERS.names())
    for name, entry in IMPORTERS.items():
        assert callable(entry.detect) and entry.name == name
