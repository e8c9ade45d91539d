"""Bounded cost per upload: every limit gives a line-numbered 400 before any
work starts, on SQLite and PostgreSQL, and values the database cannot store
never reach it."""

from __future__ import annotations

import io
import json

import pytest

from tests import crafted

BASE = crafted.session("s1", {"Base": ["hi", "ok"], "Ours": ["hello", "sure"]})


def upload(client, lines: list[str], name: str = "x.jsonl", **fields):
    data = {"file": (io.BytesIO("".join(f"{line}\n" for line in lines).encode()), name)}
    return client.post(
        "/api/v1/runs", data={**data, **fields}, content_type="multipart/form-data"
    )


def mutated(**changes) -> str:
    session = json.loads(json.dumps(BASE))
    for path, value in changes.items():
        target = session
        *parents, last = path.split(".")
        for part in parents:
            target = target[int(part)] if part.isdigit() else target[part]
        target[int(last) if last.isdigit() else last] = value
    return json.dumps(session)


@pytest.fixture
def limited(any_database_url, app_factory):
    """An app with small limits, on each database (the database outlives the
    app: ``any_database_url`` is set up first, so it is torn down last)."""
    return app_factory(
        DATABASE_URL=any_database_url,
        DB_AUTO_UPGRADE=True,
        MAX_ROUNDS_PER_SESSION=3,
        MAX_METHODS=2,
        MAX_SESSIONS=2,
        MAX_TEXT_CHARS=80,
    )


@pytest.mark.parametrize(
    ("lines", "line", "path", "code"),
    [
        (
            [mutated(**{"rounds.0.round": 2**63})],
            1,
            "rounds[0].round",
            "number_too_large",
        ),
        (
            [mutated(**{"rounds.0.round": 2**31, "rounds.1.round": 2**31 + 1})],
            1,
            "rounds[0].round",
            "number_too_large",
        ),
        ([mutated(session_id="s" * 300)], 1, "session_id", "too_long"),
        ([mutated(user_profile="p" * 81)], 1, "user_profile", "too_long"),
        (
            [
                BASE_LINE := json.dumps(BASE),
                mutated(session_id="s2"),
                mutated(session_id="s3"),
            ],
            3,
            "",
            "too_many_sessions",
        ),
        (
            [json.dumps({**BASE, "rounds": BASE["rounds"] * 2})],
            1,
            "rounds",
            "too_many_rounds",
        ),
    ],
)
def test_limits_give_line_numbered_400s(limited, lines, line, path, code):
    response = upload(limited.test_client(), lines)
    assert response.status_code == 400
    problem = next(p for p in response.get_json()["errors"] if p["code"] == code)
    assert (problem["line"], problem["path"]) == (line, path)
    assert problem["message"]
    assert limited.extensions["storage"].runs.unfinished_runs() == []


def test_too_many_methods_and_long_method_names(limited):
    three = {"A": "x", "B": "y", "C": "z"}
    session = {
        **BASE,
        "rounds": [{"round": 1, "user_message": "m", "responses": three}],
    }
    response = upload(limited.test_client(), [json.dumps(session)])
    [problem] = response.get_json()["errors"]
    assert (problem["code"], problem["line"], problem["path"]) == (
        "too_many_methods",
        1,
        "rounds[0].responses",
    )
    long_name = {"M" * 300: "x", "B": "y"}
    session["rounds"][0]["responses"] = long_name
    codes = [
        p["code"]
        for p in upload(limited.test_client(), [json.dumps(session)]).get_json()[
            "errors"
        ]
    ]
    assert "too_long" in codes


def test_non_finite_numbers_are_rejected(client):
    line = json.dumps(BASE).replace('"ok"', '{"text": "ok", "latency_s": 1e999}')
    response = upload(client, [line])
    assert response.status_code == 400
    [problem] = response.get_json()["errors"]
    assert (problem["code"], problem["path"]) == (
        "not_finite",
        "rounds[1].responses.Base.latency_s",
    )


def test_a_long_file_name_is_a_400(limited):
    response = upload(
        limited.test_client(), [json.dumps(BASE)], name="a" * 300 + ".jsonl"
    )
    assert response.status_code == 400
    assert response.get_json()["errors"][0]["code"] == "too_long"


def test_long_slot_topics_are_rejected(client):
    session = {**BASE, "ground_truth_slots": {"t" * 65: {"city": "Seoul"}}}
    problem = upload(client, [json.dumps(session)]).get_json()["errors"][0]
    assert (problem["code"], problem["path"]) == (
        "too_long",
        "ground_truth_slots." + "t" * 65,
    )


def test_rejected_uploads_leave_no_file(limited, tmp_path):
    folder = limited.config["UPLOAD_FOLDER"]
    for lines in (
        [mutated(session_id="s" * 300)],
        [json.dumps(BASE)] * 3,
        ["{not json"],
    ):
        assert upload(limited.test_client(), lines).status_code == 400
    from pathlib import Path

    assert list(Path(folder).iterdir()) == []


@pytest.mark.parametrize(
    ("fields", "code"),
    [
        ({"samples": "²"}, "samples_out_of_range"),
        (
            {
                "quality_weights": json.dumps(
                    dict.fromkeys(
                        [
                            "coherence",
                            "completeness",
                            "length",
                            "structure",
                            "vocabulary",
                        ],
                        1e308,
                    )
                )
            },
            "bad_weights",
        ),
        ({"quality_weights": "[" * 100_000}, "bad_weights"),
        ({"judge_model": "gpt-any"}, "bad_judge_model"),
    ],
)
def test_hostile_fields_are_400s_not_500s(app_factory, fields, code):
    client = app_factory(
        JUDGE_API_URL="http://127.0.0.1:9/v1", JUDGE_MODEL="judge-a"
    ).test_client()
    response = upload(client, [json.dumps(BASE)], **fields)
    assert response.status_code == 400, response.get_data(as_text=True)[:300]
    assert response.get_json()["errors"][0]["code"] == code


def test_a_page_number_that_is_not_ascii_is_page_one(embedded_app, tmp_path):
    from tests.pipeline_support import evaluate

    path = crafted.write(tmp_path / "c.jsonl", crafted.alignment_sessions())
    document = evaluate(embedded_app, path, None, suites=["quality"])
    token = embedded_app.extensions["storage"].runs.get_run(document["run"]["id"]).token
    assert (
        embedded_app.test_client().get(f"/r/{token}?page=²&spage=⁵").status_code == 200
    )


def test_a_nul_character_is_a_400_on_both_databases(limited):
    line = json.dumps(BASE).replace('"hello"', '"hel\\u0000lo"')
    response = upload(limited.test_client(), [line])
    assert response.status_code == 400
    problem = response.get_json()["errors"][0]
    assert (problem["code"], problem["line"], problem["path"]) == (
        "nul_character",
        1,
        "rounds[0].responses.Ours",
    )
