"""The CharacterBench importer (``dataset/characterbench.py``,
``docs/importers.md``): the synthetic dimension files in
``tests/data/importers/characterbench/`` (invented texts in the released
layout, ``../shared/formats/characterbench.md``: the benchmark publishes
no licence, so none of its texts is copied) converted by the CLI and the
upload page, every record converted or reported with the field at fault,
and the human scores kept on each dimension's own scale."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from dataset.characterbench import SCALES, characterbench, dimension_of
from dataset.convert import detect_file
from dataset.importers import Options, Skipped

FOLDER = Path(__file__).parents[1] / "data" / "importers" / "characterbench"
ENGAGEMENT = FOLDER / "engagement_test.json"


def records(name: str) -> list[dict]:
    return json.loads((FOLDER / name).read_text("utf-8"))


def run_cli(app, *args: str):
    return app.test_cli_runner().invoke(args=["convert", *args])


def read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def test_a_folder_of_dimension_files_converts_into_one_file(app_factory, tmp_path):
    out = tmp_path / "cb.jsonl"
    result = run_cli(app_factory(), str(FOLDER), "--out", str(out), "--profile", "-")
    assert result.exit_code == 0, result.stderr
    assert "3 files: detected layout characterbench" in result.stderr
    assert result.stdout.rstrip().endswith(
        "4 sessions converted, 0 records skipped; valid"
    )
    sessions = {s["session_id"]: s for s in read(out)}
    assert sorted(sessions) == [
        "behavior_consistency_human:5",
        "engagement:3",
        "engagement:9",
        "memory_consistency:41",
    ]
    # the method from response_messages.model, spellings normalised
    methods = {sid: list(s["rounds"][0]["responses"]) for sid, s in sessions.items()}
    assert methods == {
        "behavior_consistency_human:5": ["characterglm"],
        "engagement:3": ["characterglm"],
        "engagement:9": ["gpt"],
        "memory_consistency:41": ["claude3-opus"],
    }


def test_the_files_named_one_by_one_give_the_same_sessions(app_factory, tmp_path):
    named = [str(FOLDER / n) for n in sorted(p.name for p in FOLDER.iterdir())]
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    run_cli(app_factory(), *named, "--out", str(a), "--profile", "-")
    run_cli(app_factory(), str(FOLDER), "--out", str(b), "--profile", "-")
    assert read(a) == read(b)


def test_one_record_maps_field_by_field():
    [record] = records("memory_consistency_test.json")
    s = characterbench(record, 1, Options(source="memory_consistency_test.json"))
    assert s["session_id"] == "memory_consistency:41"
    # the user's profile is the user's; the character's persona is in meta
    assert s["user_profile"] == record["user_profile"]
    assert s["meta"]["character"] == {
        "name": record["character_name"],
        "profile": record["character_profile"],
        "greeting": record["greeting"],
    }
    [round_] = s["rounds"]
    assert round_["round"] == 1
    assert round_["user_message"] == record["dialogue"][-1]["utterance"]
    reply = round_["responses"]["claude3-opus"]
    assert reply["text"] == record["response_messages"]["response"]
    assert reply["human"] == {
        "scores": {"memory_consistency": {"value": 4, "scale": [1, 4]}}
    }
    history = s["meta"]["history"]  # the greeting first, then all but the query
    assert [(t["speaker"], t["text"]) for t in history] == [
        ("character", record["greeting"]),
        *((t["speaker"], t["utterance"]) for t in record["dialogue"][:-1]),
    ]
    # nothing lost: the other language, the reference, pred_*, data_source
    assert s["meta"]["translation"]["en"] == record["translation_en"]
    assert s["meta"]["messages"]["output"]["dialogue_segments"]
    kept = s["meta"]["record"]
    assert kept["pred_zh_sc"] == record["pred_zh_sc"] and kept["gold"] == 4
    assert kept["data_source"] == record["data_source"]
    assert s["meta"]["dimension"] == "memory_consistency"
    assert s["meta"]["scale"] == [1, 4]


def test_english_is_chosen_by_an_option_and_the_chinese_kept():
    [first, second] = records("engagement_test.json")
    en = characterbench(first, 1, Options(source="engagement_test.json", language="en"))
    assert en["rounds"][0]["user_message"] == "Where do you want to go today?"
    assert en["user_profile"] == first["translation_en"]["user_profile"]
    assert en["meta"]["character"]["name"] == "Captain Paper"
    assert en["meta"]["translation"]["zh"]["dialogue"] == first["dialogue"]
    assert en["meta"]["language"] == "en"
    assert "translation_en" not in en["meta"]["record"]  # nothing else in it
    # fields only the translation has are kept too (2 released records)
    extra = copy.deepcopy(first)
    extra["translation_en"]["data_source"] = "online_data.json"
    kept = characterbench(
        extra, 1, Options(source="engagement_test.json", language="en")
    )
    assert kept["meta"]["record"]["translation_en"] == {
        "data_source": "online_data.json"
    }
    # "User" and the user's English name are the user; the name, the character
    speakers = [t["speaker"] for t in en["meta"]["history"]]
    assert speakers == ["character", "user", "character"]
    # an object profile as key: value lines, the object kept; "N/A" is none
    watch = characterbench(
        second, 2, Options(source="engagement_test.json", language="en", profile="-")
    )
    assert watch["meta"]["character"]["profile"].startswith("name: The Watchmaker\n")
    assert watch["meta"]["character"]["profile_fields"]["hobbies"] == [
        "repairing watches",
        "chess",
    ]
    assert watch["meta"]["character"]["greeting"] == ""
    assert watch["user_profile"] == "-"  # none given: the option's


def test_speakers_come_from_the_speaker_field_not_the_position():
    """A dialogue that starts with the character: by position the query
    would be the character's; the speaker field says it is the user's."""
    [_, second] = records("engagement_test.json")
    s = characterbench(second, 2, Options(source="engagement_test.json", profile="-"))
    assert [t["speaker"] for t in s["meta"]["history"]] == ["character"]
    assert s["rounds"][0]["user_message"] == second["dialogue"][-1]["utterance"]


def _broken(change) -> dict:
    [record] = records("memory_consistency_test.json")
    record = copy.deepcopy(record)
    change(record)
    return record


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (lambda r: r.pop("id"), r"^id: missing"),
        (lambda r: r.update(id=True), r"^id: "),
        (
            lambda r: r.update(annotation_score=5),
            r"^annotation_score: 5 is not a number on memory_consistency's scale 1–4",
        ),
        (lambda r: r.update(annotation_score="4"), r"^annotation_score: '4'"),
        (lambda r: r.update(dialogue=[]), r"^dialogue: missing, empty"),
        (
            lambda r: r["dialogue"].pop(),
            r"^dialogue: the last item is not the user's query",
        ),
        (
            lambda r: r["dialogue"][1].update(speaker="narrator"),
            r"^dialogue\[1\]\.speaker: 'narrator' is neither",
        ),
        (
            lambda r: r["dialogue"][0].update(utterance=None),
            r"^dialogue\[0\]\.utterance: missing",
        ),
        (
            lambda r: r["dialogue"].__setitem__(0, "hi"),
            r"^dialogue\[0\]: not an object",
        ),
        (
            lambda r: r["dialogue"][-1].update(utterance=" "),
            r"^dialogue: the user's query \(the last item\) is empty",
        ),
        (lambda r: r.pop("response_messages"), r"^response_messages: missing"),
        (
            lambda r: r["response_messages"].pop("model"),
            r"^response_messages\.model: missing",
        ),
        (
            lambda r: r["response_messages"].update(response=3),
            r"^response_messages\.response: missing",
        ),
        (
            lambda r: r["response_messages"].update(response=""),
            r"^response_messages\.response: empty",
        ),
        (lambda r: r.update(translation_en="text"), r"^translation_en: not an object"),
        (lambda r: r.update(user_profile=None), r"^no system message or persona"),
    ],
)
def test_every_bad_record_is_reported_with_the_field_at_fault(change, why):
    with pytest.raises(Skipped, match=why):
        characterbench(
            _broken(change), 1, Options(source="memory_consistency_test.json")
        )


def test_english_chosen_without_a_translation_is_reported():
    record = _broken(lambda r: r.pop("translation_en"))
    with pytest.raises(Skipped, match=r"^translation_en: missing"):
        characterbench(
            record, 1, Options(source="memory_consistency_test.json", language="en")
        )
    # the Chinese original converts without it
    assert characterbench(record, 1, Options(source="memory_consistency_test.json"))


def test_a_file_name_without_a_dimension_is_reported():
    [record] = records("memory_consistency_test.json")
    with pytest.raises(Skipped, match="names no CharacterBench dimension"):
        characterbench(record, 1, Options(source="results.json"))
    assert dimension_of("engagement_test (1).json") == "engagement"
    assert dimension_of("human_likeness.json") == "human_likeness"
    assert dimension_of("engagements_test.json") is None
    assert len(SCALES) == 13


def test_the_cli_reports_each_skipped_record_with_its_file_and_number(
    app_factory, tmp_path
):
    broken = tmp_path / "engagement_test.json"
    items = records("engagement_test.json")
    items[0]["response_messages"]["model"] = ""
    broken.write_text(json.dumps(items, ensure_ascii=False), "utf-8")
    out = tmp_path / "o.jsonl"
    result = run_cli(
        app_factory(),
        "--from",
        "characterbench",
        str(broken),
        str(FOLDER / "memory_consistency_test.json"),
        "--out",
        str(out),
    )
    assert result.exit_code == 0, result.stderr
    assert (
        f"{broken}: skipped record 1: response_messages.model: missing, or not text"
    ) in result.stderr
    assert (
        f"{broken}: skipped record 2: no system message or persona to use as "
        "user_profile (give --profile)"
    ) in result.stderr
    assert "1 sessions converted, 2 records skipped; valid" in result.stdout
    nothing = run_cli(
        app_factory(),
        "--from",
        "characterbench",
        str(broken),
        "--out",
        str(tmp_path / "n.jsonl"),
    )
    assert nothing.exit_code == 2 and "no record of" in nothing.stderr


def test_the_upload_page_converts_a_dimension_file_in_the_language_chosen(
    app_factory,
):
    client = app_factory().test_client()

    def post(url: str, **form):
        with ENGAGEMENT.open("rb") as stream:
            data = {"file": (stream, ENGAGEMENT.name), **form}
            return client.post(url, data=data, content_type="multipart/form-data")

    checked = post("/api/v1/validate").get_json()
    assert checked["looks_like"] == "characterbench"
    converted = post("/api/v1/convert", **{"from": "characterbench", "language": "en"})
    assert converted.status_code == 200
    assert converted.headers["X-Sessions-Converted"] == "1"
    [skipped] = json.loads(converted.headers["X-Skipped"])
    assert skipped["record"] == 2 and "User profile" in skipped["reason"]
    [session] = [
        json.loads(line) for line in converted.get_data(as_text=True).splitlines()
    ]
    assert session["session_id"] == "engagement:3"
    assert session["rounds"][0]["user_message"] == "Where do you want to go today?"
    wrong = post("/api/v1/convert", **{"from": "characterbench", "language": "fr"})
    assert wrong.status_code == 400
    assert wrong.get_json()["errors"][0]["code"] == "unknown_language"


def test_the_upload_page_offers_the_language_not_the_method(app_factory):
    page = app_factory().test_client().get("/?lang=zh").get_data(as_text=True)
    assert '"characterbench": ["profile", "personality", "language"]' in page
    assert "Chinese (as released)" not in page  # in the reader's language


def test_detection_reads_the_first_record_of_a_pretty_printed_array():
    assert detect_file(ENGAGEMENT) == "characterbench"


@pytest.mark.parametrize(
    ("scores", "code"),
    [
        ({"engagement": {"value": 6, "scale": [1, 5]}}, "human_score_range"),
        ({"engagement": {"value": 0.5, "scale": [1, 5]}}, "human_score_range"),
        ({"engagement": {"value": 3, "scale": [5, 1]}}, "human_score_scale"),
        ({"engagement": {"value": 3, "scale": [1.0, 5]}}, "human_score_scale"),
        ({"engagement": {"value": 3}}, "human_score_scale"),
        ({"engagement": {"scale": [1, 5]}}, "missing_field"),
        ({"engagement": {"value": "3", "scale": [1, 5]}}, "wrong_type"),
        ({"Engagement!": {"value": 3, "scale": [1, 5]}}, "human_criterion_name"),
        ({"engagement": 3}, "wrong_type"),
        ([3], "wrong_type"),
    ],
)
def test_a_human_score_off_its_scale_is_refused(app_factory, tmp_path, scores, code):
    reply = {"text": "Hi", "human": {"scores": scores}}
    session = {
        "session_id": "s",
        "user_profile": "p",
        "user_personality": "q",
        "rounds": [{"round": 1, "user_message": "m", "responses": {"M": reply}}],
    }
    path = tmp_path / "f.jsonl"
    path.write_text(json.dumps(session) + "\n", "utf-8")
    report = app_factory().extensions["runs"].validate_file(path).to_dict()
    assert report["valid"] is False
    assert [e["code"] for e in report["errors"]] == [code]
    good = {
        **reply,
        "human": {"scores": {"engagement": {"value": 2.5, "scale": [1, 5]}}},
    }
    session["rounds"][0]["responses"]["M"] = good
    path.write_text(json.dumps(session) + "\n", "utf-8")
    assert app_factory().extensions["runs"].validate_file(path).to_dict()["valid"]


def agreement_rows(page: str) -> list[list[str]]:
    """The judge audit's agreement table as text cells: criterion, judge,
    n, r, ρ, τ-b, κw (each value with its interval), α."""
    import html
    import re

    found = []
    for criterion, row in re.findall(
        r'<tr[^>]*data-testid="agreement-row" data-criterion="([^"]*)">(.*?)</tr>',
        page,
        re.S,
    ):
        cells = re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.S)
        found.append(
            [html.unescape(criterion)]
            + [
                " ".join(html.unescape(re.sub(r"<[^>]+>", " ", c)).split())
                for c in cells
            ]
        )
    return found


def _dimension_file(path: Path, pairs: list[tuple[int, int]]) -> Path:
    """A dimension file of invented records whose replies carry the scripted
    judge's AL (``[[al=N]]``) beside each record's human score."""
    [template] = records("memory_consistency_test.json")
    made = []
    for k, (al, score) in enumerate(pairs, start=1):
        record = copy.deepcopy(template)
        record["id"] = 100 + k
        record["annotation_score"] = record["gold"] = score
        record["response_messages"]["model"] = "GPT" if k % 2 else "glm"
        record["response_messages"]["response"] = f"[[al={al}]] [[binary=1]] reply {k}"
        made.append(record)
    path.write_text(json.dumps(made, ensure_ascii=False), "utf-8")
    return path


def test_human_scores_reach_the_judge_audit_on_their_own_scale(
    app_factory, judge_server, tmp_path
):
    """A converted file's annotation_score labels, read by a run: the judge
    audit gives each dimension's agreement with the judge's AL, with its
    scale and n, equal to scipy's on the same pairs."""
    from scipy import stats

    from tests.store.test_workspaces import upload
    from tests.web.views.test_api import wait_final

    engagement = [(20, 1), (35, 2), (30, 3), (70, 4), (90, 5), (60, 5)]
    memory = [(80, 4), (25, 1), (50, 2), (45, 3)]
    folder = tmp_path / "cb"
    folder.mkdir()
    _dimension_file(folder / "engagement_test.json", engagement)
    _dimension_file(folder / "memory_consistency_test.json", memory)
    app = app_factory(JUDGE_API_URL=judge_server.url, JUDGE_MODEL="scripted")
    out = tmp_path / "cb.jsonl"
    converted = run_cli(app, str(folder), "--out", str(out))
    assert converted.exit_code == 0, converted.stderr
    client = app.test_client()
    client.get("/")
    answer = upload(client, out.read_bytes(), suites="alignment")
    assert answer.status_code == 202, answer.get_json()
    results = wait_final(client, answer.get_json()["token"])["results"]
    audit = dict(results["judge_validity"]["human"])
    human = audit.pop("scripted")
    # beside the live judge, the template's pred_* fields: recorded judges
    assert len(audit) == 16 and all(entry["recorded"] for entry in audit.values())
    assert "recorded" not in human
    assert set(human) == {"n", "scores"}  # no AL or binary label in the file
    assert human["n"] == 10
    for key, pairs, scale in (
        ("engagement:1-5", engagement, [1, 5]),
        ("memory_consistency:1-4", memory, [1, 4]),
    ):
        found = human["scores"][key]
        als, labels = zip(*pairs, strict=True)
        assert found["scale"] == scale and found["n"] == len(pairs)
        assert found["criterion"] == key.partition(":")[0]
        assert found["spearman"] == pytest.approx(stats.spearmanr(als, labels)[0])
        assert found["kendall"] == pytest.approx(stats.kendalltau(als, labels)[0])
    # each label is a row on its own scale, never rescaled to 0-100
    labels = sorted(
        (r["metric"], r["value"])
        for r in results["rows"]
        if r["metric"].startswith("human_score@")
    )
    assert labels[0] == ("human_score@engagement:1-5", 1.0)
    assert len(labels) == 10
    # the witness (tests/witness/reference.py, written from the docs) agrees
    from tests.witness.differences import validity_differences

    assert validity_differences(results) == []
    # the dashboard's judge audit says each dimension with its scale
    token = answer.get_json()["token"]
    page = client.get(f"/r/{token}?lang=en").get_data(as_text=True)
    rho = f"{stats.spearmanr(*zip(*engagement, strict=True))[0]:.3f}"
    rows = {(row[0], row[1]): row for row in agreement_rows(page)}
    # the judge's AL against the scores: ranks only, so no kappa
    assert rows[("engagement (1–5)", "scripted (AL)")][4].startswith(rho)
    assert rows[("memory_consistency (1–4)", "scripted (AL)")][6] == ""


@pytest.mark.parametrize(
    ("lang", "said"),
    [
        ("en", "missing, or not text"),
        ("zh", "缺失或不是文本"),
        ("ko", "없거나 텍스트가 아닙니다"),
    ],
)
def test_the_page_says_why_a_record_was_skipped_in_the_readers_language(
    app_factory, tmp_path, lang, said
):
    items = records("memory_consistency_test.json")
    items.append(copy.deepcopy(items[0]))
    items[1]["response_messages"]["model"] = None
    broken = tmp_path / "memory_consistency_test.json"
    broken.write_text(json.dumps(items, ensure_ascii=False), "utf-8")
    with broken.open("rb") as stream:
        converted = (
            app_factory()
            .test_client()
            .post(
                f"/api/v1/convert?lang={lang}",
                data={"file": (stream, broken.name), "from": "characterbench"},
                content_type="multipart/form-data",
            )
        )
    [skipped] = json.loads(converted.headers["X-Skipped"])
    assert skipped["record"] == 2
    assert skipped["reason"].startswith("response_messages.model")
    assert said in skipped["reason"]


def _recorded_file(path: Path, triples: list[tuple[int, float, float]]) -> Path:
    """A dimension file of invented records: (human score, pred_zh, pred_en_sc)."""
    [template] = records("memory_consistency_test.json")
    made = []
    for k, (score, zh, en_sc) in enumerate(triples, start=1):
        record = copy.deepcopy(template)
        record["id"] = 200 + k
        record["annotation_score"] = record["gold"] = score
        record["response_messages"]["response"] = f"reply {k}"
        for field in [f for f in record if f.startswith("pred_")]:
            record[field] = float(score)
        record["pred_zh"], record["pred_en_sc"] = zh, en_sc
        made.append(record)
    path.write_text(json.dumps(made, ensure_ascii=False), "utf-8")
    return path


def test_the_importer_records_each_pred_field_as_a_named_judge():
    [record] = records("memory_consistency_test.json")
    session = characterbench(record, 1, Options(source="memory_consistency_test.json"))
    [reply] = session["rounds"][0]["responses"].values()
    judges = reply["judges"]
    assert len(judges) == 16
    assert judges["CharacterJudge/zh_sc"] == {
        "memory_consistency": {"value": record["pred_zh_sc"], "scale": [1, 4]}
    }
    assert "pred_zh_sc" in session["meta"]["record"]  # kept as released too
    # a pred value off the dimension's scale is no verdict: left out, never moved
    record["pred_en"] = 9.0
    session = characterbench(record, 1, Options(source="memory_consistency_test.json"))
    [reply] = session["rounds"][0]["responses"].values()
    assert "CharacterJudge/en" not in reply["judges"]


@pytest.mark.parametrize(
    ("judges", "code"),
    [
        (
            {"bad name@x": {"engagement": {"value": 2, "scale": [1, 5]}}},
            "recorded_judge_name",
        ),
        ({"J/a": {"engagement": {"value": 7, "scale": [1, 5]}}}, "human_score_range"),
        ({"J/a": {"engagement": {"value": 2, "scale": [5, 1]}}}, "human_score_scale"),
        (
            {"J/a": {"Engagement": {"value": 2, "scale": [1, 5]}}},
            "human_criterion_name",
        ),
        ({"J/a": [2]}, "wrong_type"),
    ],
)
def test_a_recorded_judge_off_its_scale_is_refused(app_factory, tmp_path, judges, code):
    session = {
        "session_id": "s",
        "user_profile": "p",
        "user_personality": "q",
        "rounds": [
            {
                "round": 1,
                "user_message": "hi",
                "responses": {"M": {"text": "yo", "judges": judges}},
            }
        ],
    }
    path = tmp_path / "f.jsonl"
    path.write_text(json.dumps(session) + "\n", "utf-8")
    found = app_factory().extensions["runs"].validate_file(path).to_dict()
    assert not found["valid"]
    assert [e["code"] for e in found["errors"]] == [code]
    assert found["errors"][0]["path"].startswith("rounds[0].responses.M.judges")


def _agreement_is_scipys(found: dict, judged: list, labels: list) -> None:
    """r with scipy's own Fisher-z interval; rho and tau-b with the
    Bonett-Wright and Fieller SEs on scipy's values and normal quantile."""
    import math

    from scipy import stats

    n = len(judged)
    result = stats.pearsonr(judged, labels)
    assert found["pearson"] == pytest.approx(result.statistic)
    assert found["pearson_ci"] == pytest.approx(list(result.confidence_interval(0.95)))
    z = stats.norm.ppf(0.975)
    for name, value, se in (
        ("spearman", stats.spearmanr(judged, labels)[0], None),
        ("kendall", stats.kendalltau(judged, labels)[0], math.sqrt(0.437 / (n - 4))),
    ):
        se = se or math.sqrt((1 + value**2 / 2) / (n - 3))
        ends = [math.tanh(math.atanh(value) + s * z * se) for s in (-1, 1)]
        assert found[f"{name}_ci"] == pytest.approx(ends)


def test_recorded_judges_reach_the_audit_without_a_judge(app_factory, tmp_path):
    """A CharacterBench file evaluated with no judge configured: done, no
    call, and each recorded variant's agreement with the human scores per
    dimension (scipy's on the same pairs), marked recorded."""
    from scipy import stats

    from tests.store.test_workspaces import upload
    from tests.web.views.test_api import wait_final

    triples = [
        (1, 1.0, 1.4),
        (2, 3.0, 2.1),
        (3, 2.0, 3.3),
        (4, 4.0, 3.9),
        (2, 1.0, 2.2),
    ]
    folder = tmp_path / "cb"
    folder.mkdir()
    _recorded_file(folder / "memory_consistency_test.json", triples)
    app = app_factory()
    out = tmp_path / "cb.jsonl"
    converted = run_cli(app, str(folder), "--out", str(out))
    assert converted.exit_code == 0, converted.stderr
    client = app.test_client()
    client.get("/")
    answer = upload(client, out.read_bytes(), suites="alignment")
    assert answer.status_code == 202, answer.get_json()
    final = wait_final(client, answer.get_json()["token"])
    results = final["results"]
    assert results["run"]["status"] == "done"
    assert results["run"]["counts"]["judge_calls"] == 0
    validity = results["judge_validity"]
    assert "CharacterJudge/zh" in validity["recorded_judges"]
    assert len(validity["recorded_judges"]) == 16
    human = validity["human"]
    labels = [t[0] for t in triples]
    for judge, column in (("CharacterJudge/zh", 1), ("CharacterJudge/en_sc", 2)):
        assert human[judge]["recorded"] is True
        found = human[judge]["scores"]["memory_consistency:1-4"]
        judged = [t[column] for t in triples]
        assert found["n"] == len(triples) and found["scale"] == [1, 4]
        assert found["spearman"] == pytest.approx(stats.spearmanr(judged, labels)[0])
        assert found["kendall"] == pytest.approx(stats.kendalltau(judged, labels)[0])
        _agreement_is_scipys(found, judged, labels)
    # quadratic-weighted kappa where both raters are on the scale's points
    zh = human["CharacterJudge/zh"]["scores"]["memory_consistency:1-4"]
    judged = [t[1] for t in triples]
    observed = sum((a - b) ** 2 for a, b in zip(judged, labels, strict=True)) / 5
    expected = sum((a - b) ** 2 for a in judged for b in labels) / 25
    assert zh["weighted_kappa"] == pytest.approx(1 - observed / expected)
    # a fractional verdict (a self-consistency mean) is on no point: no kappa
    en_sc = human["CharacterJudge/en_sc"]["scores"]["memory_consistency:1-4"]
    assert en_sc["weighted_kappa"] is None
    # the recorded verdicts are rows of their own, never human labels
    recorded = [r for r in results["rows"] if r["metric"].startswith("recorded@")]
    assert len(recorded) == 16 * len(triples)
    assert not [
        r for r in results["rows"] if r["metric"] in ("human_al", "human_binary")
    ]
    from tests.witness.differences import validity_differences

    assert validity_differences(results) == []
    # the dashboard's judge audit names each recorded judge as recorded
    token = answer.get_json()["token"]
    for lang, said in (("en", " (recorded)"), ("zh", "（记录）"), ("ko", " (기록됨)")):
        page = client.get(f"/r/{token}?lang={lang}").get_data(as_text=True)
        judges = {(row[0], row[1]) for row in agreement_rows(page)}
        assert ("memory_consistency (1–4)", f"CharacterJudge/zh{said}") in judges
    # each with its interval, on the dashboard too
    rho, (low, high) = zh["spearman"], zh["spearman_ci"]
    page = client.get(f"/r/{token}?lang=en").get_data(as_text=True)
    rows = {(row[0], row[1]): row for row in agreement_rows(page)}
    row = rows[("memory_consistency (1–4)", "CharacterJudge/zh (recorded)")]
    assert row[4] == f"{rho:.3f} [{low:.3f}, {high:.3f}]"
    kappa_low, kappa_high = zh["weighted_kappa_ci"]
    assert row[6] == f"{zh['weighted_kappa']:.3f} [{kappa_low:.3f}, {kappa_high:.3f}]"
    # the Methods paragraph names them, and the exports carry their rows
    methods = client.get(f"/r/{token}/methods.txt").get_data(as_text=True)
    assert "Verdicts recorded in the file from 16 judges (CharacterJudge/en," in methods
    assert "they are not human labels" in methods
    csv_text = client.get(f"/r/{token}/export.csv").get_data(as_text=True)
    assert "recorded@CharacterJudge/zh@memory_consistency:1-4" in csv_text
