"""Web pages through the Flask test client: forms, CSRF, headers, pages, and
the error answers ``web/__init__.py`` gives."""

from __future__ import annotations

import io
import json
import re
import time
from pathlib import Path

import pytest

from testing.judge_server import ScriptedJudge
from tests import crafted
from tests.web.views.test_api import rejected_large_upload

ROOT = Path(__file__).resolve().parents[3]
XSS = "</script><script>alert(1)</script><img src=x onerror=alert(2)>"


def csrf_token(client) -> str:
    page = client.get("/").get_data(as_text=True)
    return re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)


def post_run(client, data: bytes, name="logs.jsonl", **fields):
    body = {
        "file": (io.BytesIO(data), name),
        "csrf_token": csrf_token(client),
        **fields,
    }
    return client.post("/runs", data=body, content_type="multipart/form-data")


def finished_page(client, location: str, timeout=600) -> str:
    token = location.rsplit("/", 1)[1]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = client.get(f"/api/v1/runs/{token}").get_json()["status"]
        if status not in ("queued", "running"):
            return client.get(location).get_data(as_text=True)
        time.sleep(0.1)
    raise AssertionError("run did not finish")


@pytest.fixture
def judged_app(app_factory):
    with ScriptedJudge() as judge:
        yield app_factory(
            JUDGE_API_URL=judge.url,
            JUDGE_MODEL="scripted",
            JUDGE_API_KEY="sk-do-not-leak",
        )


def test_upload_page_offers_the_form_and_format(client):
    page = client.get("/").get_data(as_text=True)
    assert 'enctype="multipart/form-data"' in page
    assert 'name="csrf_token"' in page
    assert "/template.jsonl" in page
    with client.get("/template.jsonl") as template:  # send_file: close the stream
        assert template.data == (ROOT / "sample_data.jsonl").read_bytes()


def test_form_post_without_csrf_token_is_refused(client):
    body = {"file": (io.BytesIO(b"{}"), "x.jsonl")}
    response = client.post("/runs", data=body, content_type="multipart/form-data")
    assert response.status_code == 400
    assert "Reload the page" in response.get_data(as_text=True)


def test_invalid_upload_lists_problems_with_line_numbers(client):
    response = post_run(client, b'{"session_id": "a"}\n\n[1]\n')
    page = response.get_data(as_text=True)
    assert response.status_code == 400
    assert "line 1" in page and "line 3" in page
    assert "user_profile" in page
    assert "Traceback" not in page


def test_413_page_is_friendly(app_factory):
    client = app_factory(MAX_UPLOAD_MB=1).test_client()
    response = rejected_large_upload(client, "/runs")
    assert response.status_code == 413
    assert "1 MB" in response.get_data(as_text=True)


def test_unknown_token_is_a_404_page(client):
    response = client.get("/r/does-not-exist")
    assert response.status_code == 404
    assert "does not exist" in response.get_data(as_text=True)


def test_security_headers_and_nonce(client):
    response = client.get("/")
    policy = response.headers["Content-Security-Policy"]
    nonce = re.search(r"'nonce-([^']+)'", policy).group(1)
    assert f'nonce="{nonce}"' in response.get_data(as_text=True)
    assert "unsafe-eval" not in policy and "script-src 'self'" in policy
    assert response.headers["Referrer-Policy"] == "no-referrer"
    assert "Strict-Transport-Security" not in response.headers  # plain-HTTP dev
    assert client.get("/").headers["Content-Security-Policy"] != policy  # fresh nonce


def test_pages_and_answers_that_carry_tokens_are_never_cached(client):
    """Pages, exports and API answers carry a run's, a workspace's or an
    annotator's token, or what it opens: no-store. Assets keep theirs."""
    created = client.post("/api/v1/workspaces", json={"name": "w"})
    token = created.get_json()["manage_token"]
    for answer in (
        created,
        client.get(f"/w/{token}"),
        client.get("/r/none"),
        client.get(f"/api/v1/workspaces/{token}"),
        client.get("/"),
    ):
        assert answer.headers["Cache-Control"] == "no-store", answer.request.path
    asset = client.get("/static/app.css")
    assert asset.headers.get("Cache-Control") != "no-store"


def test_https_mode_sets_hsts_and_secure_cookies(app_factory):
    app = app_factory(FORCE_HTTPS=True)
    assert app.config["SESSION_COOKIE_SECURE"] is True
    assert "Strict-Transport-Security" in app.test_client().get("/").headers


def test_full_flow_dashboard_drilldown_exports(judged_app):
    client = judged_app.test_client()
    response = post_run(
        client, (ROOT / "sample_data.jsonl").read_bytes(), name="对话.jsonl"
    )
    assert response.status_code == 303
    location = response.headers["Location"]
    assert re.fullmatch(r"/r/[A-Za-z0-9_-]{32}", location)
    page = finished_page(client, location)
    assert "对话.jsonl" in page
    assert 'id="chart-al_curve"' in page and 'id="chart-radar"' in page
    figures = json.loads(re.search(r'id="figures">(.*?)</script>', page, re.S).group(1))
    assert {"al_curve", "nal_curve", "radar"} <= set(figures)
    assert "sk-do-not-leak" not in page
    session_link = re.search(r'href="(/r/[^"]+/session\?id=[^"]+)"', page).group(1)
    session = client.get(session_link.replace("&amp;", "&")).get_data(as_text=True)
    assert "Judge reasoning" in session
    csv_body = client.get(f"{location}/export.csv").get_data(as_text=True)
    assert (
        csv_body.splitlines()[0]
        == "session_id,round,method,metric,value,status,note,note_code,judge"
    )
    results = client.get(f"{location}/export.json").get_json()
    assert results["schema"] == "personasteer.results/v1"
    assert "sk-do-not-leak" not in json.dumps(results)


def test_baseline_selection_orients_differences(judged_app, tmp_path):
    client = judged_app.test_client()
    path = crafted.write(tmp_path / "crafted.jsonl", crafted.alignment_sessions())
    location = post_run(client, path.read_bytes()).headers["Location"]
    finished_page(client, location)
    base_view = client.get(f"{location}?baseline=Base").get_data(as_text=True)
    ours_view = client.get(f"{location}?baseline=Ours").get_data(as_text=True)
    assert "Δ +20.00" in base_view  # Ours − Base on AL
    assert "Δ \u221220.00" in ours_view  # Base − Ours, with a real minus sign


def test_uploaded_text_is_escaped_in_every_page(judged_app):
    client = judged_app.test_client()
    session = crafted.session("x<script>", {f"M{XSS}": ["a", "b"], "Base": [XSS, XSS]})
    session["user_profile"] = XSS
    data = (json.dumps(session) + "\n").encode()
    location = post_run(client, data, name=f"{XSS}.jsonl").headers["Location"]
    pages = [finished_page(client, location)]
    link = re.search(r'href="(/r/[^"]+/session\?id=[^"]+)"', pages[0]).group(1)
    pages.append(client.get(link.replace("&amp;", "&")).get_data(as_text=True))
    for page in pages:
        assert "<script>alert" not in page
        assert "<img src=x" not in page


def test_finished_results_are_immutable_and_cancel_is_a_no_op(judged_app, tmp_path):
    client = judged_app.test_client()
    path = crafted.write(tmp_path / "crafted.jsonl", crafted.alignment_sessions())
    location = post_run(client, path.read_bytes()).headers["Location"]
    before = finished_page(client, location)
    token = location.rsplit("/", 1)[1]
    cancel = client.post(f"{location}/cancel", data={"csrf_token": csrf_token(client)})
    assert cancel.status_code == 303
    assert client.get(f"/api/v1/runs/{token}").get_json()["status"] == "done"
    assert client.get(location).get_data(as_text=True).count("Δ") == before.count("Δ")


def test_plotly_is_served_from_our_origin_with_long_cache(client):
    import plotly

    with client.get(f"/vendor/plotly-{plotly.__version__}.min.js") as response:
        assert response.status_code == 200
        assert "immutable" in response.headers["Cache-Control"]
    assert client.get("/vendor/plotly-0.0.0.min.js").status_code == 404


def test_uploads_are_stored_under_generated_names(app, client):
    post_run(
        client, (ROOT / "sample_data.jsonl").read_bytes(), name="../../etc/对话.jsonl"
    )
    stored = [path.name for path in Path(app.config["UPLOAD_FOLDER"]).iterdir()]
    assert len(stored) == 1
    assert re.fullmatch(r"[0-9a-f]{32}\.jsonl", stored[0])


def test_slots_suite_end_to_end_panel_and_per_topic_csv(client):
    location = post_run(client, (ROOT / "sample_data.jsonl").read_bytes()).headers[
        "Location"
    ]
    page = finished_page(client, location)
    assert 'data-testid="panel-slots"' in page
    for chart in ("slots_prf", "slots_topics", "slots_extra", "slots_latency"):
        assert f'id="chart-{chart}"' in page
    csv_body = client.get(f"{location}/export.csv").get_data(as_text=True)
    assert ",slot_tp@basic_info," in csv_body and ",slot_f1," in csv_body
    link = re.search(r'href="(/r/[^"]+/session\?id=[^"]+)"', page).group(1)
    session = client.get(link.replace("&amp;", "&")).get_data(as_text=True)
    assert "ground_truth" in session and "predicted" in session  # the slot diff


def test_sample_data_fills_the_quality_and_simulation_panels(client):
    location = post_run(client, (ROOT / "sample_data.jsonl").read_bytes()).headers[
        "Location"
    ]
    page = finished_page(client, location)
    for suite, charts in (
        ("quality", ("quality_components", "quality_overall")),
        ("simulation", ("simulation_parts", "simulation_crrs")),
    ):
        assert f'data-testid="panel-{suite}"' in page
        for chart in charts:
            assert f'id="chart-{chart}"' in page
    assert "Welch" in page and "Interpretation of CRRS" in page
    figures = json.loads(re.search(r'id="figures">(.*?)</script>', page, re.S).group(1))
    crrs_bars = figures["simulation_crrs"]["data"][0]
    assert len(crrs_bars["x"]) == 3 and all(v is not None for v in crrs_bars["y"])


@pytest.mark.parametrize("action", ["cancel", "retry"])
def test_every_form_needs_its_csrf_token(client, tmp_path, action):
    path = crafted.write(tmp_path / "c.jsonl", crafted.alignment_sessions())
    location = post_run(client, path.read_bytes()).headers["Location"]
    finished_page(client, location)
    assert client.post(f"{location}/{action}").status_code == 400  # no token
    with_token = client.post(
        f"{location}/{action}", data={"csrf_token": csrf_token(client)}
    )
    assert with_token.status_code in (303, 409)  # accepted, or nothing to retry


def test_the_share_link_never_comes_from_the_host_header(client):
    from tests.web.views.test_api import sample_bytes, upload, wait_final

    token = upload(client, sample_bytes(), suites="quality").get_json()["token"]
    wait_final(client, token)
    page = client.get(f"/r/{token}?lang=zh", headers={"Host": "evil.example"})
    found = re.findall(r'data-url="([^"]*)"', page.get_data(as_text=True))
    # the browser resolves it; without the sharer's language, so a teammate
    # reads it in theirs (and gets no language cookie from the link)
    assert found == [f"/r/{token}"]


def test_the_workspace_manage_token_is_handed_over_once_after_the_upload(app):
    from tests.web.views.test_api import sample_bytes, wait_final

    client = app.test_client()
    client.get("/")
    answer = post_run(client, sample_bytes(), suites="quality")
    location = answer.headers["Location"]
    first = client.get(location).get_data(as_text=True)
    assert 'id="workspace-memo"' in first  # the uploader's browser remembers it
    run = app.extensions["storage"].runs.find_run(location.rsplit("/", 1)[1]).item
    space = app.extensions["storage"].workspaces.get_workspace(run.workspace_id)
    assert space.manage_token in first
    wait_final(client, run.token)
    for opener in (client, app.test_client()):  # later, or the link sent on
        page = opener.get(location).get_data(as_text=True)
        assert space.manage_token not in page and 'id="workspace-memo"' not in page


def test_the_judge_audit_gives_every_value_its_n_and_every_gap_its_reason(
    judged_app, tmp_path
):
    """Issue 56: position consistency, first position, length bias and AUC
    each with the n it rests on (pairs compared, verdicts, responses); a
    quantity that cannot be computed says why in its value's place."""
    from tests.pipeline_support import evaluate

    sessions = crafted.alignment_sessions()
    for session in sessions:  # Ours grows longer round by round, Base does not
        for k, round_ in enumerate(session["rounds"]):
            round_["responses"]["Ours"] += " longer" * k
    path = crafted.write(tmp_path / "a.jsonl", sessions)
    document = evaluate(judged_app, path, None, suites=["alignment", "pairwise"])
    run = judged_app.extensions["storage"].runs.get_run(document["run"]["id"])
    page = judged_app.test_client().get(f"/r/{run.token}?lang=en").get_data(True)

    def value(key: str) -> str:
        item = re.search(rf'data-testid="audit-{key}">(.*?)</div>', page, re.S)[1]
        return re.sub(r"\s+", " ", re.search(r'audit-value">(.*?)</dd>', item, re.S)[1])

    # 2 sessions x 5 rounds, Base against Ours once each
    assert value("position_consistency").endswith("(n=10)")
    assert re.search(r"\(n=\d+\)$", value("first_position_rate"))
    # Base's AL is 40 throughout: no ρ, so the combined ρ rests on Ours' 10
    length = value("length_spearman")
    assert length.startswith("scripted: ") and "(n=10) [" in length
    assert "Base — (n=10)" in length
    assert value("cross_mode_auc").endswith("(n=20)")
    assert "one judge sample per item" in value("samples_alpha")
    assert "—" in value("samples_alpha") and "n=" not in value("samples_alpha")


def test_the_session_page_says_a_status_only_where_a_value_is_not_scored(
    judged_app, tmp_path
):
    """Issue 61: "已评分" (scored) followed every value of the session page;
    a value says it is a score, only an unscored one says its status."""
    from tests.pipeline_support import evaluate

    replies = {"Ours": ["a [[al=50]]", "b [[fault=garbage]]"], "Base": ["c", "d"]}
    path = crafted.write(tmp_path / "s.jsonl", [crafted.session("x", replies)])
    document = evaluate(judged_app, path, None, suites=["alignment"])
    run = judged_app.extensions["storage"].runs.get_run(document["run"]["id"])
    page = judged_app.test_client().get(f"/r/{run.token}/session?id=x&lang=zh")
    page = page.get_data(as_text=True)
    assert 'data-metric="al"' in page
    assert "status-ok" not in page and "已评分" not in page
    assert 'class="score-status status-unscored">未评分<' in page


def test_a_two_round_run_shows_r2_undefined_and_says_why(judged_app, tmp_path):
    """Two points always fit a line: the dashboard showed AL R² 1.00; it
    now shows no value, and the reason in the cell, not only on hover."""
    from tests.pipeline_support import evaluate

    two = {
        "Ours": ["a [[al=50]]", "b [[al=70]]"],
        "Base": ["c [[al=40]]", "d [[al=45]]"],
    }
    sessions = [crafted.session(name, two) for name in ("x", "y")]
    path = crafted.write(tmp_path / "two.jsonl", sessions)
    document = evaluate(judged_app, path, None, suites=["alignment"])
    assert document["summary"]["Ours"]["al_r2"] is None
    assert document["summary_notes"]["Ours"]["al_r2"]["code"] == "r2_two_rounds"
    run = judged_app.extensions["storage"].runs.get_run(document["run"]["id"])
    page = judged_app.test_client().get(f"/r/{run.token}?lang=en").get_data(True)
    # both methods lack it for one reason: said once, under the table
    notes = re.findall(r'data-testid="column-note">([^<]+)<', page)
    assert any(
        note.startswith(
            "AL R² — for every method: undefined with two rounds: "
            "a line always fits two points"
        )
        for note in notes
    ), notes
