"""The judge audit in the reader's language and the file's method order
(issue 61): a suite that did not run is named by its label, never its id,
and per-method values follow the run's methods whatever order the stored
dict's keys come back in (PostgreSQL's JSONB: by length, then bytes)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from web.presentation.audit import audit_rows


def stored_run():
    by_method = {"RAG": 0.25, "Base": -0.5, "Ours": 0.75}  # as JSONB gives them
    return SimpleNamespace(
        id="r1",
        status="done",
        judge={"model": "scripted"},
        options={},
        suites=["alignment"],  # not pairwise
        methods=["Base", "RAG", "Ours"],  # the file's order
        aggregates={
            "judge_validity": {
                "length_spearman": {"scripted": 0.1},
                "length_spearman_n": 30,
                "length_spearman_by_method": {"scripted": by_method},
                "length_spearman_by_method_n": {
                    "scripted": dict.fromkeys(by_method, 10)
                },
            }
        },
    )


@pytest.mark.parametrize(
    ("lang", "label"),
    [
        ("en", "the suite “Pairwise judge (both orders)” did not run"),
        ("zh", "“成对评审（双向顺序）”套件未运行"),
        ("ko", "“쌍대 평가(양방향 순서)” 세트가 실행되지 않았습니다"),
    ],
)
def test_a_suite_that_did_not_run_is_named_in_the_readers_language(app, lang, label):
    with app.test_request_context(f"/?lang={lang}"):
        rows = {row["key"]: row for row in audit_rows(stored_run())}
    said = (
        rows["position_consistency"]["reason"] + rows["position_consistency"]["value"]
    )
    assert label in said
    assert "pairwise" not in said


def test_per_method_values_follow_the_files_order(app):
    with app.test_request_context("/?lang=en"):
        rows = {row["key"]: row for row in audit_rows(stored_run())}
    value = rows["length_spearman"]["value"]
    assert value.index("Base") < value.index("RAG") < value.index("Ours"), value


def test_the_human_agreement_card_lists_the_methods_in_the_files_order():
    from web.presentation.dashboard import _methods_in_order

    shown = {"human": {"methods": {"RAG": {"n": 1}, "Base": {"n": 2}, "Ours": {}}}}
    run = SimpleNamespace(methods=["Base", "RAG", "Ours"])
    ordered = _methods_in_order(shown, run)["human"]["methods"]
    assert list(ordered) == ["Base", "RAG", "Ours"]
    assert _methods_in_order({"human": None}, run) == {"human": None}
