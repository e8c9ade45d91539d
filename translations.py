"""i18n: flask-babel set-up, locale choice, and translated labels.

Locale: ``?lang=`` (remembered in a cookie), then the cookie, then
Accept-Language matched on its primary subtag (``zh-CN`` → ``zh``, ``ko-KR``
→ ``ko``; werkzeug's ``best_match`` does not fall back that way). Outside a
request the selector returns None, so Celery tasks never translate: results
are stored locale-neutral and translated when rendered.
"""

from __future__ import annotations

from pathlib import Path

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from flask import request
from flask_babel import Babel, format_datetime, format_decimal, get_locale
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l

LANGUAGES = {"en": "English", "zh": "中文", "ko": "한국어"}
LANG_COOKIE = "lang"


def select_locale() -> str | None:
    if not request:
        return None
    wanted = request.args.get("lang") or request.cookies.get(LANG_COOKIE)
    if wanted in LANGUAGES:
        return wanted
    for tag, _quality in request.accept_languages:
        primary = tag.split("-")[0].lower()
        if primary in LANGUAGES:
            return primary
    return "en"


def remember_language(response):
    """Persist an explicit ``?lang=`` choice for the next pages."""
    wanted = request.args.get("lang")
    if wanted in LANGUAGES:
        response.set_cookie(
            LANG_COOKIE, wanted, max_age=365 * 24 * 3600, samesite="Lax"
        )
    return response


def compile_stale_catalogs(root: Path) -> list[str]:
    """Compile ``.po`` files whose ``.mo`` is missing or older (set-up also
    compiles; this keeps a development checkout from serving stale text)."""
    compiled = []
    for po_path in sorted(root.glob("*/LC_MESSAGES/messages.po")):
        mo_path = po_path.with_suffix(".mo")
        if mo_path.exists() and mo_path.stat().st_mtime >= po_path.stat().st_mtime:
            continue
        with po_path.open("rb") as po_file:
            catalog = read_po(po_file)
        with mo_path.open("wb") as mo_file:
            write_mo(mo_file, catalog)
        compiled.append(po_path.parts[-3])
    return compiled


def init_app(app) -> None:
    locales = Path(app.root_path) / "locales"
    app.config.setdefault("BABEL_TRANSLATION_DIRECTORIES", str(locales))
    app.config.setdefault("BABEL_DEFAULT_LOCALE", "en")
    compile_stale_catalogs(locales)
    Babel(app, locale_selector=select_locale)
    app.after_request(remember_language)
    app.jinja_env.globals.update(
        LANGUAGES=LANGUAGES,
        current_language=lambda: str(get_locale() or "en"),
        metric_label=metric_label,
        status_label=status_label,
        suite_label=suite_label,
        number=number,
        when=when,
    )


# -- labels ---------------------------------------------------------------
METRIC_LABELS = {
    "al": _l("Alignment level AL"),
    "al_style": _l("Style"),
    "al_content": _l("Content"),
    "al_naturalness": _l("Naturalness"),
    "al_personalization": _l("Personalization"),
    "al_conversation": _l("Conversation"),
    "binary": _l("Would keep chatting"),
    "al_avg": _l("AL average"),
    "al_slope": _l("AL slope"),
    "al_intercept": _l("AL intercept"),
    "al_r2": _l("AL R²"),
    "binary_rate": _l("Keep-chatting rate"),
    "al_session_slope": _l("Mean per-session slope"),
    "al_style_avg": _l("Style"),
    "al_content_avg": _l("Content"),
    "al_naturalness_avg": _l("Naturalness"),
    "al_personalization_avg": _l("Personalization"),
    "al_conversation_avg": _l("Conversation"),
    "nal": _l("Normalized AL"),
    "coherence": _l("Coherence"),
    "completeness": _l("Completeness"),
    "length": _l("Length"),
    "structure": _l("Structure"),
    "vocabulary": _l("Vocabulary"),
    "quality": _l("Overall quality"),
    "coherence_avg": _l("Coherence"),
    "completeness_avg": _l("Completeness"),
    "length_avg": _l("Length"),
    "structure_avg": _l("Structure"),
    "vocabulary_avg": _l("Vocabulary"),
    "quality_avg": _l("Overall quality"),
    "nvcs": _l("Style similarity (NVCS)"),
    "ertd": _l("Readability gap (ERTD)"),
    "nvcs_avg": _l("Style similarity (NVCS)"),
    "ertd_avg": _l("Readability gap (ERTD)"),
    "jera": _l("Roleplay ability (JERA)"),
    "jera_immersivity": _l("Immersivity"),
    "jera_consistency": _l("Consistency"),
    "jera_creativity": _l("Creativity"),
    "jera_avg": _l("Roleplay ability (JERA)"),
    "jera_immersivity_avg": _l("Immersivity"),
    "jera_consistency_avg": _l("Consistency"),
    "jera_creativity_avg": _l("Creativity"),
    "almp": _l("Attribute match (ALMP)"),
    "almp_avg": _l("Attribute match (ALMP)"),
    "pas": _l("Persona adherence (PAS)"),
    "bvs": _l("Behavioral variance (BVS)"),
    "ora": _l("Order accuracy (ORA)"),
    "dei": _l("Decision explainability (DEI)"),
    "crrs": _l("Composite realism (CRRS)"),
    "pas_avg": _l("Persona adherence (PAS)"),
    "bvs_avg": _l("Behavioral variance (BVS)"),
    "ora_avg": _l("Order accuracy (ORA)"),
    "dei_avg": _l("Decision explainability (DEI)"),
    "crrs_avg": _l("Composite realism (CRRS)"),
    "slot_judge": _l("LLM judge score (slots)"),
    "slot_judge_avg": _l("LLM judge score (slots)"),
    "slot_precision": _l("Slot precision"),
    "slot_recall": _l("Slot recall"),
    "slot_f1": _l("Slot F1"),
    "slot_exact": _l("Exact match"),
    "token_precision": _l("Token precision"),
    "token_recall": _l("Token recall"),
    "token_f1": _l("Token F1"),
    "bleu1": _l("BLEU-1"),
    "extra_slots": _l("Extra (hallucinated) slots"),
    "extra_values": _l("Extra values"),
    "latency": _l("Session latency (s)"),
    "latency_mean": _l("Mean latency (s)"),
    "latency_median": _l("Median latency (s)"),
    "latency_p95": _l("P95 latency (s)"),
    "latency_total": _l("Total latency (s)"),
    "slot_tp": _l("Slots found (TP)"),
    "slot_fp": _l("Wrong or extra slots (FP)"),
    "slot_fn": _l("Slots missed (FN)"),
    "slot_exact_count": _l("Exact matches"),
    "token_matched": _l("Matched tokens"),
    "token_pred": _l("Predicted tokens"),
    "token_gt": _l("Ground-truth tokens"),
    "bleu1_sum": _l("BLEU-1 sum"),
}

STATUS_LABELS = {
    "queued": _l("queued"),
    "running": _l("running"),
    "done": _l("done"),
    "partial": _l("partial"),
    "failed": _l("failed"),
    "cancelled": _l("cancelled"),
    "ok": _l("scored"),
    "unscored": _l("unscored"),
    "error": _l("error"),
    "not_configured": _l("not configured"),
}

CRRS_BANDS = {
    "excellent": _l("excellent (> 0.85)"),
    "good": _l("good (0.70–0.85)"),
    "acceptable": _l("acceptable (0.50–0.70)"),
    "poor": _l("poor (< 0.50)"),
}

SUITE_LABELS = {
    "alignment": _l("Persona alignment (LLM judge)"),
    "quality": _l("Response quality heuristics"),
    "style": _l("Roleplay style (NVCS, ERTD)"),
    "roleplay": _l("Roleplay judge (JERA, ALMP)"),
    "simulation": _l("Guest-simulation quality"),
    "slots": _l("Slot-extraction memory"),
}

# Validation messages, same placeholders as schema.MESSAGES (a test checks).
PROBLEM_MESSAGES = {
    "bad_extension": _l("The file %(name)s does not end in .jsonl."),
    "empty_file": _l("The file holds no sessions."),
    "line_too_long": _l(
        "The line is %(size)s bytes long; the limit is %(limit)s bytes."
    ),
    "not_utf8": _l(
        "The line is not valid UTF-8 (first bad byte at column %(column)s)."
    ),
    "invalid_json": _l("The line is not valid JSON: %(detail)s (column %(column)s)."),
    "not_object": _l("The line must be a JSON object, found %(found)s."),
    "missing_field": _l("%(path)s: required field is missing."),
    "wrong_type": _l("%(path)s: expected %(expected)s, found %(found)s."),
    "empty_value": _l("%(path)s: must not be empty."),
    "round_below_one": _l("%(path)s: must be an integer >= 1."),
    "negative_latency": _l("%(path)s: must be a number >= 0."),
    "samples_out_of_range": _l("%(path)s: must be an integer from 1 to %(maximum)s."),
    "already_final": _l("The run is already %(status)s."),
    "bad_weights": _l("Quality weights rejected: %(detail)s"),
    "retry_not_needed": _l("The run is %(status)s: nothing to retry."),
    "duplicate_session": _l(
        "%(path)s: session id %(session_id)s already used on line %(first_line)s."
    ),
    "round_order": _l(
        "%(path)s: round %(number)s must be greater than the previous round %(previous)s."
    ),
    "method_missing": _l(
        "%(path)s: method(s) %(methods)s missing (present in line %(reference_line)s)."
    ),
    "method_extra": _l(
        "%(path)s: method(s) %(methods)s not in the other rounds (see line %(reference_line)s)."
    ),
    "too_many_errors": _l("%(count)s more error(s) not shown."),
    "bom_removed": _l("A UTF-8 byte order mark at the start of the file was ignored."),
    "empty_personality": _l(
        "%(path)s: empty personality; alignment prompts will have no traits."
    ),
    "unknown_field": _l("%(path)s: unknown field, ignored."),
    "bad_suite": _l("Suites not available for this file: %(suites)s."),
    "too_large": _l("The file is larger than the %(limit)s MB limit."),
    "missing_file": _l("Choose a .jsonl file to upload."),
    "queue_unavailable": _l(
        "The evaluation queue is unavailable; nothing was started. Try again shortly."
    ),
}


def metric_label(metric_id: str) -> str:
    """Translated label; per-topic ids (``slot_f1@interests``) keep the topic."""
    base, _, topic = metric_id.partition("@")
    label = str(METRIC_LABELS.get(base, base))
    return f"{label} · {topic}" if topic else label


def suite_label(name: str) -> str:
    return str(SUITE_LABELS.get(name, name))


def status_label(status: str) -> str:
    return str(STATUS_LABELS.get(status, status))


def problem_message(problem: dict) -> str:
    """A validation problem in the reader's language (params kept as data)."""
    template = PROBLEM_MESSAGES.get(problem.get("code"))
    if template is None:
        return problem.get("message", "")
    params = {key: value for key, value in (problem.get("params") or {}).items()}
    if isinstance(params.get("suites"), list):
        params["suites"] = ", ".join(params["suites"])
    try:
        return str(template) % params
    except (KeyError, TypeError, ValueError):
        return problem.get("message", "")


def translate_problems(problems: list[dict]) -> list[dict]:
    return [
        {**p, "message": problem_message(p) or p.get("message", "")} for p in problems
    ]


def number(value, digits: int = 2) -> str:
    if value is None:
        return "—"
    return format_decimal(value, format=f"#,##0.{'0' * digits}" if digits else "#,##0")


def when(moment) -> str:
    return format_datetime(moment, "medium") if moment else "—"


__all__ = ["_", "_l", "init_app", "problem_message", "translate_problems"]
