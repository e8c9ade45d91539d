"""Judge protocols as data: the built-in files, a user's file with a typo
(a 400 naming line and key), and MT-Bench single and pairwise and ALOE run
end to end against a scripted judge answering in their native formats."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest

from metrics import protocols
from metrics.protocol_checks import ProtocolError, fields_of
from testing.judge_server import ScriptedJudge
from tests import crafted
from tests.pipeline_support import FAST_JUDGE, evaluate
from tests.web.views.test_api import wait_final

ALOE = (protocols.PROTOCOL_DIR / "aloe.toml").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", protocols.builtins())
def test_every_builtin_protocol_loads_and_renders_every_mode(name):
    protocol = protocols.builtin(name)
    assert protocol.sha256 in protocol.modes[next(iter(protocol.modes))].prompt or all(
        protocol.sha256[:12] in mode.prompt for mode in protocol.modes.values()
    )
    for mode_name, mode in protocol.modes.items():
        fields = dict.fromkeys(fields_of(mode_name), "x")
        messages = mode.template.render(**fields)
        assert [m["role"] for m in messages] == ["system", "user"]
        assert mode.format, "a mode quotes its format in a re-ask"


def test_the_default_protocol_keeps_the_five_dimensions_and_the_sum_check():
    mode = protocols.builtin("personasteer").modes["alignment"]
    assert mode.dimensions == (
        "style",
        "content",
        "naturalness",
        "personalization",
        "conversation",
    )
    verdict = mode.parse(
        "Style: 18/20\nContent: 17/20\nNaturalness: 16/20\n"
        "Personalization: 15/20\nConversation: 14/20\nTotal: \\boxed{85}"
    )
    assert (verdict.score, verdict.flags) == (85.0, ["sum_mismatch"])


@pytest.mark.parametrize(
    ("change", "line", "key"),
    [
        (("system =", "sytem ="), 14, "modes.alignment.sytem"),
        (('kind = "score"', 'kind = "scores"'), 12, "modes.alignment.kind"),
        (("$profile", "$profil"), 21, "modes.alignment.user"),
        (('name = "aloe"', 'nmae = "aloe"'), 5, "nmae"),
    ],
)
def test_a_protocol_with_a_typo_names_its_line_and_key(change, line, key):
    with pytest.raises(ProtocolError) as raised:
        protocols.load(ALOE.replace(*change))
    assert (raised.value.problems[0][0], raised.value.problems[0][1]) == (line, key)


def test_invalid_toml_names_its_line():
    with pytest.raises(ProtocolError) as raised:
        protocols.load('name = "x"\nversion = "1"\n[modes.alignment\n')
    assert raised.value.problems[0][:3] == (3, "", "toml_syntax")


def test_a_json_verdict_is_read_only_from_the_fields_a_mode_declares():
    """Issue 56: the schema's verdict field and ``verdict_fields``; a number
    under any other key is on no known scale."""
    aloe = protocols.builtin("aloe").modes["alignment"]
    assert aloe.parse('{"score": 4}').score == 4.0
    assert aloe.parse('{"rating": 4}').note.code == "verdict_scale_unclear"
    declaring = ALOE.replace("\nformat =", '\nverdict_fields = ["Grade"]\nformat =')
    mine = protocols.load(declaring).modes["alignment"]
    assert mine.parse('{"grade": 2}').score == 2.0  # declared: read
    with pytest.raises(ProtocolError) as raised:
        protocols.load(ALOE.replace("\nformat =", '\nverdict_fields = "x"\nformat ='))
    problem = raised.value.problems[0]
    assert problem[1:3] == ("modes.alignment.verdict_fields", "bad_value")


def test_the_api_refuses_a_protocol_with_a_typo_with_a_400_naming_line_and_key(client):
    body = {
        "file": (io.BytesIO(crafted_bytes()), "f.jsonl"),
        "protocol": (
            io.BytesIO(ALOE.replace("system =", "sytem =").encode()),
            "p.toml",
        ),
    }
    response = client.post(
        "/api/v1/runs", data=body, content_type="multipart/form-data"
    )
    assert response.status_code == 400
    [first, *_] = response.get_json()["errors"]
    assert first["line"] == 14 and first["path"] == "protocol:modes.alignment.sytem"
    assert "unknown key" in first["message"]
    unknown = client.post(
        "/api/v1/runs",
        data={"file": (io.BytesIO(crafted_bytes()), "f.jsonl"), "protocol": "mt-bnech"},
        content_type="multipart/form-data",
    )
    assert unknown.status_code == 400
    assert "mt-bnech" in unknown.get_json()["errors"][0]["message"]


def crafted_bytes() -> bytes:
    return "".join(
        json.dumps(s, ensure_ascii=False) + "\n" for s in crafted.alignment_sessions()
    ).encode()


@pytest.fixture
def server():
    with ScriptedJudge() as judge:
        yield judge


def scripted_al(session_id: str, round_: int, method: str) -> int:
    for session in crafted.alignment_sessions():
        if session["session_id"] == session_id:
            text = session["rounds"][round_ - 1]["responses"][method]
            return int(text.split("[[al=")[1].split("]]")[0])
    raise KeyError(session_id)


@pytest.mark.parametrize(("protocol", "high"), [("mt-bench", 10), ("aloe", 5)])
def test_mt_bench_and_aloe_single_answer_grading_run_end_to_end(
    app_factory, server, tmp_path, protocol, high
):
    app = app_factory(JUDGE_API_URL=server.url, JUDGE_MODEL="scripted", **FAST_JUDGE)
    path = crafted.write(tmp_path / "f.jsonl", crafted.alignment_sessions())
    document = evaluate(app, path, None, suites=["alignment"], protocol=protocol)
    assert document["run"]["status"] == "done"
    assert document["run"]["judge"]["protocol"]["name"] == protocol
    al = [r for r in document["rows"] if r["metric"] == "al"]
    assert len(al) == 20 and {r["status"] for r in al} == {"ok"}
    for row in al:  # the native verdict, read exactly: round(al x high / 100)
        expected = max(
            1,
            round(
                scripted_al(row["session_id"], row["round"], row["method"]) * high / 100
            ),
        )
        assert row["value"] == expected
    lacking = [r for r in document["rows"] if r["metric"] in ("binary", "al_style")]
    assert {(r["status"], r["note_code"]) for r in lacking} == {
        ("not_applicable", "protocol_lacks")
    }
    assert document["summary"]["Ours"]["al_avg"] is not None
    assert document["run"]["status"] == "done"  # not_applicable never makes partial


def test_what_the_protocol_never_asks_is_counted_apart_from_not_applicable(
    app_factory, server, tmp_path
):
    """ALOE asks for no dimension and no binary verdict: those rows are
    ``not_applicable`` by the protocol's design, so the run header and the
    Methods paragraph show them apart instead of as metrics that could not
    apply (the header said "Not applicable 4,872" for such a run)."""
    app = app_factory(JUDGE_API_URL=server.url, JUDGE_MODEL="scripted", **FAST_JUDGE)
    path = crafted.write(tmp_path / "f.jsonl", crafted.alignment_sessions())
    document = evaluate(app, path, None, suites=["alignment"], protocol="aloe")
    lacking = [r for r in document["rows"] if r["note_code"] == "protocol_lacks"]
    assert len(lacking) == 20 * 6  # five dimensions and the binary verdict, per item
    assert document["run"]["counts"]["not_applicable"] == len(lacking)
    run = app.extensions["storage"].runs.get_run(document["run"]["id"])
    page = app.test_client().get(f"/r/{run.token}").get_data(True)
    shown = re.search(r'data-testid="count-not-applicable">([^<]*)<', page)[1]
    assert shown == "0"
    asked = re.search(r'data-testid="count-not-asked">([^<]*)<', page)[1]
    assert asked.strip() == "120"
    paragraph = re.search(r'data-testid="methods-paragraph">([^<]*)<', page)[1]
    assert "0 not applicable" in paragraph
    assert "120 not asked by the judge protocol" in paragraph


def test_mt_bench_pairwise_runs_end_to_end_with_c_as_a_tie(
    app_factory, server, tmp_path
):
    app = app_factory(JUDGE_API_URL=server.url, JUDGE_MODEL="scripted", **FAST_JUDGE)
    sessions = [
        crafted.session(
            f"s{n}",
            {
                "A": ["[[strength=9]] good"],
                "B": ["[[strength=0]] bad"],
                "C": ["[[strength=0]] also bad"],
            },
        )
        for n in range(3)
    ]
    path = crafted.write(tmp_path / "pairs.jsonl", sessions)
    document = evaluate(app, path, None, suites=["pairwise"], protocol="mt-bench")
    assert document["run"]["status"] == "done"
    rows = {(r["session_id"], r["method"], r["metric"]): r for r in document["rows"]}
    assert rows[("s0", "B", "pairwise@C")]["value"] == 0.5  # equal strength: [[C]]
    assert document["summary"]["A"]["pairwise_winrate"] > 0.5


def test_a_users_own_protocol_file_runs_and_is_stored_with_its_digest(
    app_factory, server, tmp_path
):
    text = ALOE.replace('name = "aloe"', 'name = "our-aloe"')
    app = app_factory(JUDGE_API_URL=server.url, JUDGE_MODEL="scripted", **FAST_JUDGE)
    client = app.test_client()
    body = {
        "file": (io.BytesIO(crafted_bytes()), "f.jsonl"),
        "suites": "alignment",
        "protocol": (io.BytesIO(text.encode()), "mine.toml"),
    }
    response = client.post(
        "/api/v1/runs", data=body, content_type="multipart/form-data"
    )
    assert response.status_code == 202, response.get_json()
    document = wait_final(client, response.get_json()["token"])["results"]
    stored = document["run"]["judge"]["protocol"]
    assert (
        stored["name"] == "our-aloe" and stored["sha256"] == protocols.load(text).sha256
    )
    assert {r["status"] for r in document["rows"] if r["metric"] == "al"} == {"ok"}


def test_judge_check_shows_reply_verdict_tokens_and_structured_output(
    app_factory, server
):
    app = app_factory(JUDGE_API_URL=server.url, JUDGE_MODEL="scripted-json-reject")
    runner = app.test_cli_runner()
    result = runner.invoke(args=["judge-check", "--json"])
    assert result.exit_code == 0, result.output
    found = {r["mode"]: r for r in json.loads(result.output)}
    assert set(found) == {"alignment", "binary", "pairwise"}
    assert found["alignment"]["structured"] == "text"  # refused, then text
    assert (
        found["alignment"]["verdict"] is not None
        and found["alignment"]["prompt_tokens"] > 0
    )
    mt = runner.invoke(args=["judge-check", "--protocol", "mt-bench", "--json"])
    assert {r["mode"] for r in json.loads(mt.output)} == {"alignment", "pairwise"}


def test_judge_check_tells_a_user_whose_judge_answers_on_another_scale(
    app_factory, server, tmp_path
):
    """A protocol asking \\boxed{1-10} of a judge that answers MT-Bench's
    "Rating: [[N]]": the check says the number's scale is unclear."""
    root = Path(protocols.__file__).parents[1]
    text = (root / "protocols" / "mt-bench.toml").read_text(encoding="utf-8")
    asked = '"[[rating]]", for example: "Rating: [[5]]"'
    assert asked in text
    text = text.replace(asked, '"\\\\boxed{rating}", for example: "\\\\boxed{5}"')
    text = text.replace("Rating: [[<1 to 10>]]", "\\boxed{<1 to 10>}")
    text = text.replace('name = "mt-bench"', 'name = "boxed-mt"')
    path = tmp_path / "boxed.toml"
    path.write_text(text, encoding="utf-8")
    app = app_factory(JUDGE_API_URL=server.url, JUDGE_MODEL="scripted")
    result = app.test_cli_runner().invoke(
        args=["judge-check", "--protocol", str(path), "--json"]
    )
    assert result.exit_code == 1, result.output  # a mode without a verdict
    found = {r["mode"]: r for r in json.loads(result.output)}["alignment"]
    assert found["verdict"] is None and "Rating: [[" in found["raw"]
    assert "does not say its scale" in found["refused"]


def test_judge_check_cli_reads_a_protocol_file(app_factory, server, tmp_path):
    app = app_factory(JUDGE_API_URL=server.url, JUDGE_MODEL="scripted-json-ok")
    path = Path(tmp_path / "aloe.toml")
    path.write_text(ALOE, encoding="utf-8")
    result = app.test_cli_runner().invoke(args=["judge-check", "--protocol", str(path)])
    assert result.exit_code == 0, result.output
    assert "structured output: json_schema" in result.output
    typo = path.with_name("typo.toml")
    typo.write_text(ALOE.replace("system =", "sytem ="), encoding="utf-8")
    bad = app.test_cli_runner().invoke(args=["judge-check", "--protocol", str(typo)])
    assert bad.exit_code == 2 and "line 14" in bad.output


def test_the_test_judge_button_needs_the_pages_csrf_token(app_factory, server):
    app = app_factory(
        JUDGE_API_URL=server.url, JUDGE_MODEL="scripted", WTF_CSRF_ENABLED=True
    )
    client = app.test_client()
    refused = client.post("/judge-check", data={"protocol": "aloe"})
    assert refused.status_code == 400
    assert server.state.calls == 0  # another site's form spends nothing
    page = client.get("/").get_data(as_text=True)
    token = page.split('name="csrf_token" value="')[1].split('"')[0]
    answer = client.post("/judge-check", data={"protocol": "aloe", "csrf_token": token})
    assert answer.status_code == 200
    [aloe] = answer.get_json()["results"]
    assert aloe["mode"] == "alignment" and 1 <= aloe["verdict"] <= 5


def test_the_protocol_checker_names_no_suite():
    """Issue 60: the checker knew two suites' modes (``KINDS``,
    ``MODE_FIELDS``); now each suite declares the protocol modes it asks
    (``Suite.protocol_modes``) and the checker reads them from its registry
    at call time. No suite's name is in its source, nor a name of such a
    mode: not as a string, not in its messages, comments or docstrings."""
    import ast

    from metrics import protocol_checks, registry

    path = Path(protocol_checks.__file__)
    source = path.read_text(encoding="utf-8")
    suites = set(registry.names())
    modes = set(protocol_checks.PROTOCOL_MODES.names())
    assert modes, "the suites declare the modes they ask"
    strings = [
        node.value
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    ]
    assert [s for s in strings if s in suites | modes - {"binary"}] == []
    # "binary" is a kind of verdict as well as a mode's name: the kinds
    # (score, binary, choice, criterion) are the checker's own vocabulary
    spelled = [
        name
        for name in sorted(modes - {"binary"})
        if re.search(rf"\b{re.escape(name)}\b", source)
    ]
    assert spelled == []


def test_a_suite_s_protocol_modes_are_what_the_checker_checks_with():
    """A mode a suite declares is checked with that suite's kind and fields;
    a suite registered with a mode of its own makes the checker accept it
    as that kind (and unregistered, a criterion again)."""
    from metrics import protocol_checks, registry
    from metrics.suite import ProtocolMode

    for name, mode in protocol_checks.PROTOCOL_MODES.items():
        assert protocol_checks.kind_of(name) == mode.kind
        assert fields_of(name) == mode.fields
        owners = [s.name for s in registry.suites() if mode in s.protocol_modes]
        assert len(owners) == 1, (name, owners)
    suite = registry.get(registry.names()[0])
    toy = type(suite)(
        name="toy_protocol_user",
        label=suite.label,
        description=suite.description,
        metrics=(),
        run=suite.run,
        summarize=suite.summarize,
        protocol_modes=(ProtocolMode("verdictish", "choice", frozenset({"response"})),),
    )
    with registry.registered(toy):
        assert protocol_checks.kind_of("verdictish") == "choice"
        assert fields_of("verdictish") == {"response"}
    assert protocol_checks.kind_of("verdictish") == "criterion"
