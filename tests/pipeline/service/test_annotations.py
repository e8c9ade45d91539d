"""Annotation queues (``pipeline/service/annotations.py``; stored by
``store/annotations.py``, ``store/annotator_links.py`` and
``store/annotation_models.py``; as files by ``pipeline/service/label_files.py``):
made with the manage link,
labelled blind through their own token, read by the judge audit with the
same figures the ``krippendorff`` package and scipy give on the labels."""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
import pytest

from testing.judge_server import ScriptedJudge
from tests.pipeline_support import evaluate

ROOT = Path(__file__).resolve().parents[3]


def judge_sample(make) -> str:
    with ScriptedJudge(timeout_sleep=12.0) as judge:
        sample = ROOT / "sample_data.jsonl"
        document = evaluate(make(), sample, judge, suites=["alignment"])
    return document["run"]["id"]


@pytest.fixture
def judged(app_factory, evaluated_copy):
    """The shipped sample, judged by the alignment suite (once a session,
    copied for each test: tests/conftest.py, EvaluatedRuns); its app and run."""
    run_id = evaluated_copy("sample-alignment", judge_sample)
    app = app_factory()
    return app, app.extensions["storage"].runs.get_run(run_id)


def make_queue(client, run, **body):
    response = client.post(
        f"/api/v1/runs/{run.manage_token}/annotations",
        json={"size": 20, "per_item": 2, **body},
    )
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def link(client, run, annotator: str) -> str:
    """The annotator's own link token (the owner makes it; the same one if
    asked again)."""
    made = client.post(
        f"/api/v1/runs/{run.manage_token}/annotators", json={"name": annotator}
    )
    assert made.status_code == 201, made.get_json()
    return made.get_json()["token"]


def label(client, run, annotator, item, al, binary, **extra):
    body = {"item": item, "al": al, "binary": binary, **extra}
    return client.post(f"/a/{link(client, run, annotator)}/label", json=body)


def test_the_annotator_link_is_never_built_from_the_host_header(judged):
    app, run = judged
    response = app.test_client().post(
        f"/api/v1/runs/{run.manage_token}/annotations",
        json={"size": 10},
        headers={"Host": "evil.example"},
    )
    made = response.get_json()
    assert response.status_code == 201, made
    assert made["annotator_url"] == f"/a/{made['token']}"  # relative: no PUBLIC_URL


def test_a_queue_is_a_stratified_sample_with_its_own_token(judged):
    app, run = judged
    client = app.test_client()
    made = make_queue(client, run)
    token = made["token"]
    assert made["items"] == 20 and len(token) >= 22  # >= 128 random bits
    assert token not in (run.token, run.manage_token)
    queue = app.extensions["storage"].annotations.queue_by_token(token)
    methods = {method for _, _, method in queue.items}
    assert methods == set(run.methods)  # every method in the sample
    assert (
        client.post(
            f"/api/v1/runs/{run.token}/annotations", json={"size": 20}
        ).status_code
        == 403
    )
    too_small = client.post(
        f"/api/v1/runs/{run.manage_token}/annotations", json={"size": 2}
    )
    assert too_small.status_code == 400
    assert too_small.get_json()["errors"][0]["path"] == "size"


def test_the_labelling_page_and_its_json_are_blind(judged):
    app, run = judged
    client = app.test_client()
    token = make_queue(client, run)["token"]
    page = client.get(f"/a/{token}?lang=en").get_data(as_text=True)
    served = client.get(f"/a/{link(client, run, 'ann')}/item").get_data(as_text=True)
    rows = app.extensions["runs"].results_document(run)["rows"]
    scores = {
        str(r["value"]) for r in rows if r["metric"] == "al" and r["value"] is not None
    }
    for shown in (page, served):
        for method in run.methods:
            assert f'"{method}"' not in shown and f">{method}<" not in shown
        assert "scripted" not in shown  # no judge named
    body = json.loads(served)
    assert set(body) == {
        "finished",
        "progress",
        "label",
        "item",
        "profile",
        "personality",
        "history",
        "user_message",
        "response",
    }
    # no score anywhere: the judge's value of this item is in no field
    queue = app.extensions["storage"].annotations.queue_by_token(token)
    judged = app.extensions["storage"].annotations.judged_values(run.id, queue.items)[
        "scripted"
    ]
    al, _ = judged[tuple(queue.items[body["item"]])]
    shown_values = [v for v in body.values() if not isinstance(v, (dict, list))]
    assert al not in shown_values and scores  # (scores exist to hide)


def test_items_short_of_labels_are_served_first(judged):
    app, run = judged
    client = app.test_client()
    make_queue(client, run, size=10, per_item=1)
    first = []
    for _ in range(3):
        item = client.get(f"/a/{link(client, run, 'ann')}/item").get_json()["item"]
        assert label(client, run, "ann", item, 50, 1).status_code == 200
        first.append(item)
    served = client.get(f"/a/{link(client, run, 'bob')}/item").get_json()["item"]
    assert served not in first  # those already have the one label wanted


def test_two_annotators_label_and_the_audit_matches_krippendorff_and_scipy(judged):
    import krippendorff
    from scipy import stats

    app, run = judged
    client = app.test_client()
    token = make_queue(client, run, size=10)["token"]
    given = {}
    for annotator, shift in (("ann", 0), ("bob", 7)):
        for _ in range(10):
            item = client.get(f"/a/{link(client, run, annotator)}/item").get_json()
            assert item["finished"] is False
            al = (item["item"] * 9 + shift) % 101
            binary = int(al >= 50)
            assert (
                label(client, run, annotator, item["item"], al, binary).status_code
                == 200
            )
            given[(annotator, item["item"])] = (al, binary)
        done = client.get(f"/a/{link(client, run, annotator)}/item").get_json()
        assert done["finished"] is True and done["progress"] == {
            "done": 10,
            "total": 10,
        }

    # the same item is never served twice to one annotator
    assert len({item for who, item in given if who == "ann"}) == 10
    storage = app.extensions["storage"]
    queue = storage.annotations.queue_by_token(token)
    judged_values = storage.annotations.judged_values(run.id, queue.items)["scripted"]
    items = range(10)
    data = np.array([[given[(a, i)][0] for i in items] for a in ("ann", "bob")], float)
    alpha = krippendorff.alpha(data, level_of_measurement="interval")
    human = [(given[("ann", i)][0] + given[("bob", i)][0]) / 2 for i in items]
    judge = [judged_values[tuple(queue.items[i])][0] for i in items]
    rho = stats.spearmanr(judge, human).statistic

    page = settled_dashboard(client, run)
    assert 'data-testid="human-agreement"' in page
    assert "20 labels of 10 items by 2 annotators." in page
    from web.views.annotation_pages import service

    with app.test_request_context():
        found = service().agreement(run, queue)
    assert found["alpha_al"]["value"] == pytest.approx(alpha)
    assert found["alpha_al"]["n"] == 10
    assert found["judges"]["scripted"]["al_spearman"]["value"] == pytest.approx(rho)
    assert found["judges"]["scripted"]["n"] == 10
    low, high = found["judges"]["scripted"]["al_spearman"]["ci"]
    assert low <= rho <= high


def test_labels_are_revised_checked_and_refused_when_closed(judged):
    app, run = judged
    client = app.test_client()
    token = make_queue(client, run)["token"]
    assert label(client, run, "ann", 0, 40, 1).status_code == 200
    assert label(client, run, "ann", 0, 60, 0, comment="better").status_code == 200
    again = client.get(f"/a/{link(client, run, 'ann')}/item?item=0").get_json()
    assert again["label"]["al"] == 60 and again["label"]["comment"] == "better"
    assert label(client, run, "ann", 0, 101, 1).status_code == 400
    assert label(client, run, "ann", 0, 50, 1, comment="x" * 2001).status_code == 400
    nameless = client.post(
        f"/api/v1/runs/{run.manage_token}/annotators", json={"name": ""}
    )
    assert nameless.status_code == 400
    skipped = {"item": 1, "skipped": True}
    assert (
        client.post(f"/a/{link(client, run, 'ann')}/label", json=skipped).status_code
        == 200
    )
    storage = app.extensions["storage"]
    queue = storage.annotations.queue_by_token(token)
    storage.annotations.close_queue(queue.id)
    closed = label(client, run, "bob", 0, 50, 1)
    assert (
        closed.status_code == 409
        and closed.get_json()["errors"][0]["code"] == "queue_closed"
    )


def test_a_revoked_link_stops_and_deleting_the_run_deletes_the_labels(judged):
    app, run = judged
    client = app.test_client()
    token = make_queue(client, run)["token"]
    assert label(client, run, "ann", 0, 40, 1).status_code == 200
    storage = app.extensions["storage"]
    queue = storage.annotations.queue_by_token(token)
    fresh = storage.annotations.revoke_queue_token(queue.id)
    assert client.get(f"/a/{token}").status_code == 404
    assert client.get(f"/a/{fresh}").status_code == 200
    assert client.delete(f"/api/v1/runs/{run.manage_token}").status_code == 204
    assert storage.annotations.queue_by_token(fresh) is None
    assert storage.annotations.labels_of(queue.id) == []


def test_the_owner_makes_a_queue_from_the_dashboard(judged):
    app, run = judged
    client = app.test_client()
    owner = client.get(f"/r/{run.manage_token}?lang=en").get_data(as_text=True)
    assert 'data-testid="create-queue"' in owner
    viewer = client.get(f"/r/{run.token}?lang=en").get_data(as_text=True)
    assert 'data-testid="annotations"' not in viewer  # nothing to show a reader yet
    csrf = owner.split('name="csrf_token" value="')[1].split('"')[0]
    made = client.post(
        f"/r/{run.manage_token}/annotations",
        data={"size": "12", "per_item": "1", "csrf_token": csrf},
    )
    assert made.status_code == 303
    owner = client.get(f"/r/{run.manage_token}?lang=en").get_data(as_text=True)
    assert (
        "12 items (seed" in owner and "1 annotator wanted per item; 0 labels" in owner
    )
    owner = client.get(f"/r/{run.manage_token}?lang=zh").get_data(as_text=True)
    assert "每个条目需要 1 位标注者" in owner
    assert 'data-testid="add-annotator"' in owner
    csrf = owner.split('name="csrf_token" value="')[1].split('"')[0]
    added = client.post(
        f"/r/{run.manage_token}/annotations/annotators",
        data={"name": "安", "csrf_token": csrf},
    )
    assert added.status_code == 303
    owner = client.get(f"/r/{run.manage_token}?lang=zh").get_data(as_text=True)
    assert 'data-testid="annotator-url"' in owner and "安" in owner
    viewer = client.get(f"/r/{run.token}?lang=en").get_data(as_text=True)
    assert 'data-testid="annotator-url"' not in viewer  # the links: owner only


def two_annotators(client, run, items=10):
    for annotator, shift in (("ann", 0), ("bob", 7)):
        for _ in range(items):
            item = client.get(f"/a/{link(client, run, annotator)}/item").get_json()
            al = (item["item"] * 9 + shift) % 101
            assert (
                label(
                    client, run, annotator, item["item"], al, int(al >= 45)
                ).status_code
                == 200
            )


def test_labels_export_and_the_labelled_file_gives_the_same_agreement(
    judged, judge_server, tmp_path
):
    from web.views.annotation_pages import service

    app, run = judged
    client = app.test_client()
    make_queue(client, run, size=10)
    two_annotators(client, run)
    rows = client.get(f"/r/{run.manage_token}/labels.jsonl")
    assert rows.status_code == 200
    lines = [json.loads(line) for line in rows.get_data(as_text=True).splitlines()]
    assert len(lines) == 20 and {row["annotator"] for row in lines} == {"ann", "bob"}
    assert all(len(row["response_sha256"]) == 64 for row in lines)
    assert (
        client.get(f"/r/{run.token}/labels.jsonl").status_code == 403
    )  # names: owner only

    labelled = tmp_path / "labelled.jsonl"
    labelled.write_bytes(client.get(f"/r/{run.manage_token}/labelled.jsonl").get_data())
    import dataset

    assert dataset.validate_file(labelled).valid
    again = evaluate(app, labelled, judge_server, suites=["alignment"])
    file_borne = again["judge_validity"]["human"]["scripted"]
    storage = app.extensions["storage"]
    with app.test_request_context():
        live = service().agreement(run, storage.annotations.queue_of_run(run.id))[
            "judges"
        ]["scripted"]
    assert file_borne["al_spearman"] == pytest.approx(live["al_spearman"]["value"])
    assert file_borne["al_kendall"] == pytest.approx(live["al_kendall"]["value"])
    assert file_borne["n"] == live["n"] == 10
    if live["binary_kappa"]["value"] is not None:
        assert file_borne["binary_kappa"] == pytest.approx(
            live["binary_kappa"]["value"]
        )

    # the labels into another run of the same replies (a fresh upload)
    other = evaluate(
        app, ROOT / "sample_data.jsonl", judge_server, suites=["alignment"]
    )
    target = storage.runs.get_run(other["run"]["id"])
    body = (
        rows.get_data()
        + json.dumps({"response_sha256": "0" * 64, "annotator": "x"}).encode()
    )
    imported = client.post(
        f"/api/v1/runs/{target.manage_token}/labels",
        data={"file": (__import__("io").BytesIO(body), "labels.jsonl")},
        content_type="multipart/form-data",
    )
    assert imported.get_json() == {"imported": 20, "unmatched": 1}
    with app.test_request_context():
        moved = service().agreement(target, storage.annotations.queue_of_run(target.id))
    assert moved["judges"]["scripted"]["al_spearman"]["value"] == pytest.approx(
        live["al_spearman"]["value"]
    )
    bad = client.post(
        f"/api/v1/runs/{target.manage_token}/labels",
        data={"file": (__import__("io").BytesIO(b"not json\n"), "l.jsonl")},
        content_type="multipart/form-data",
    )
    assert bad.status_code == 400
    assert bad.get_json()["errors"][0]["code"] == "invalid_label_line"


def settled_dashboard(client, run) -> str:
    """The dashboard once a worker has the agreement of the latest labels
    (the page never computes it: it says so while a worker does)."""
    deadline = time.monotonic() + 300
    while True:
        page = client.get(f"/r/{run.token}?lang=en").get_data(as_text=True)
        if 'data-testid="agreement-pending"' not in page:
            return page
        assert time.monotonic() < deadline, "the agreement was never computed"
        time.sleep(0.1)


def test_the_agreement_is_computed_on_a_worker_when_labels_change(judged, monkeypatch):
    """Page views never compute it (a bootstrap: seconds); a label makes a
    worker compute it once, and the page says so until it is stored."""
    from pipeline.service import agreement

    app, run = judged
    client = app.test_client()
    make_queue(client, run, size=10)
    computed = []
    real = agreement.human_agreement
    monkeypatch.setattr(
        agreement, "human_agreement", lambda *a: computed.append(1) or real(*a)
    )
    two_annotators(client, run, items=3)
    assert "6 labels of" in settled_dashboard(client, run)
    done = len(computed)
    assert 1 <= done <= 6  # labels given while one computation ran share the next
    for _ in range(3):  # page views
        client.get(f"/r/{run.token}?lang=en")
    assert len(computed) == done
    label(client, run, "cat", 0, 12, 0)  # one more label
    page = client.get(f"/r/{run.token}?lang=en").get_data(as_text=True)
    assert 'data-testid="agreement-pending"' in page or "7 labels of" in page
    assert "7 labels of" in settled_dashboard(client, run)
    assert len(computed) == done + 1


def test_an_agreement_that_fails_is_said_not_computed_for_ever(judged, monkeypatch):
    """A worker whose computation raises stores the failure for those
    labels (the page said "being computed" for ever before); the figures of
    the labels before stay, and the next label computes again."""
    from pipeline.service import agreement

    app, run = judged
    client = app.test_client()
    make_queue(client, run, size=10)
    two_annotators(client, run, items=3)
    assert "6 labels of" in settled_dashboard(client, run)
    real = agreement.human_agreement

    def broken(*args):
        raise ValueError("a broken bootstrap")

    monkeypatch.setattr(agreement, "human_agreement", broken)
    label(client, run, "cat", 0, 12, 0)
    page = settled_dashboard(client, run)
    assert 'data-testid="agreement-failed"' in page and "ValueError" in page
    assert "6 labels of" in page  # the figures before it, kept
    monkeypatch.setattr(agreement, "human_agreement", real)
    label(client, run, "cat", 1, 40, 1)
    page = settled_dashboard(client, run)
    assert "8 labels of" in page and 'data-testid="agreement-failed"' not in page


def test_an_annotator_is_the_name_in_their_link(judged):
    """Anyone with the queue's link once labelled as any name they typed,
    read and overwrote others' labels (?annotator=alice) and invented
    annotators. Now the name is fixed in each annotator's own link."""
    app, run = judged
    client = app.test_client()
    queue_token = make_queue(client, run)["token"]
    refused = client.get(f"/a/{queue_token}/item")
    assert refused.status_code == 403
    assert refused.get_json()["errors"][0]["code"] == "annotator_link_needed"
    page = client.get(f"/a/{queue_token}?lang=en").get_data(as_text=True)
    assert 'data-testid="link-needed"' in page
    assert label(client, run, "alice", 0, 90, 1).status_code == 200
    bob = link(client, run, "bob")
    # bob asks for alice's label and sends her name: he gets and writes his own
    peek = client.get(f"/a/{bob}/item?item=0&annotator=alice").get_json()
    assert peek["label"] is None
    body = {"annotator": "alice", "item": 0, "al": 10, "binary": 0}
    assert client.post(f"/a/{bob}/label", json=body).status_code == 200
    labels = {
        (x.annotator, x.item): x.al
        for x in app.extensions["storage"].annotations.labels_of(
            app.extensions["storage"].annotations.queue_by_token(queue_token).id
        )
    }
    assert labels == {("alice", 0): 90, ("bob", 0): 10}
    assert link(client, run, "bob") == bob  # one link per name
    app.extensions["storage"].annotations.revoke_annotator_link(
        app.extensions["storage"].annotations.queue_by_token(queue_token).id, "bob"
    )
    assert client.get(f"/a/{bob}/item").status_code == 404


def test_one_annotator_s_alpha_says_it_needs_two_and_a_tied_vote_says_so(judged):
    """α compares annotators: with one it is no number "— n=0" but the
    reason; κ left without a majority (every vote tied) says that."""
    import re

    app, run = judged
    client = app.test_client()
    make_queue(client, run, size=10)
    for item in range(4):
        assert (
            label(client, run, "ann", item, 20 + 20 * item, item % 2).status_code == 200
        )
    page = settled_dashboard(client, run)
    alpha = re.search(r'data-testid="alpha-al">(.*?)</dd>', page, re.S)[1]
    assert "needs two annotators" in alpha and "n=0" not in alpha and "—" not in alpha
    # counts in the plural form of their number (issue 61: "1 annotators")
    assert "4 labels of 4 items by 1 annotator." in page
    for item in range(4):  # bob votes the other way: every majority ties
        assert label(client, run, "bob", item, 30, 1 - item % 2).status_code == 200
    page = settled_dashboard(client, run)
    kappa = re.search(r'data-testid="human-kappa">(.*?)</td>', page, re.S)[1]
    assert "votes tied on 4 item(s)" in kappa and "—" not in kappa
    # beside κ, always, how many tied majorities it left out (issue 58)
    assert 'data-testid="human-tied">4 tied majorities left out' in kappa


def test_an_annotator_link_of_a_run_deleted_meanwhile_is_a_404(judged, monkeypatch):
    """The link is read, then its run (deleted between the two reads: the
    queue goes with it) is not found: the item is a 404, not a 500 from
    serving an item of no run."""
    app, run = judged
    client = app.test_client()
    make_queue(client, run)
    token = link(client, run, "ann")
    runs = app.extensions["storage"].runs
    monkeypatch.setattr(runs, "get_run", lambda run_id: None)
    assert client.get(f"/a/{token}/item").status_code == 404
