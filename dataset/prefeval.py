"""PrefEval (ICLR 2025, CC BY-NC 4.0) generation files into our sessions
(pure; ``docs/importers.md`` gives the mapping,
``../shared/formats/prefeval.md`` the layout as released).

A generation result file (``[error_]<model>_<topic>_<N>interturn.json``) is
the topic's array of items with the model's answers added; its form is read
from each item's fields: explicit (``preference`` stated by the user, the
model's ``response_to_pref``), choice-based (``conversation`` with ``query``,
``assistant_options``, …) or persona-driven (``persona`` and a
``conversation`` of numbered ``{user, assistant}`` turns). Each item becomes
a session of one round, the evaluated one: ``question`` and the model's
``response_to_q``. What came before is context in ``meta.history`` (the
preference turn, or the implicit conversation, its replies scripted, not
the model's); the *N* filler turns between are recorded by count and source
(``meta.inter_turns``), never inlined. The benchmark files themselves
(``explicit_preference/<topic>.json``, …) hold no answer: their items are
reported ("response_to_q: missing").

>>> item = {"preference": "No night trains.", "question": "Vienna to Venice?",
...         "response_to_pref": "Noted.", "response_to_q": "Take the day train."}
>>> s = prefeval(item, 1, Options(source="error_demo_travel_hotel_2interturn.json"))
>>> s["session_id"], s["user_profile"], s["rounds"][0]["responses"]
('explicit/travel_hotel/2turn/0', 'No night trains.', {'demo': 'Take the day train.'})
>>> s["meta"]["inter_turns"]
{'count': 2, 'source': 'filtered_inter_turns.json'}
>>> s["meta"]["reference"], s["meta"]["item_key"] == item_key("Vienna to Venice?")
('No night trains.', True)
"""

from __future__ import annotations

import re
from pathlib import PurePath
from typing import Any

from dataset.turns import Options, make_session, skipped

TOPICS = (
    "education_learning_styles",
    "education_resources",
    "entertain_games",
    "entertain_music_book",
    "entertain_shows",
    "entertain_sports",
    "lifestyle_beauty",
    "lifestyle_dietary",
    "lifestyle_fit",
    "lifestyle_health",
    "pet_ownership",
    "professional_work_location_style",
    "shop_fashion",
    "shop_home",
    "shop_motors",
    "shop_technology",
    "travel_activities",
    "travel_hotel",
    "travel_restaurant",
    "travel_transportation",
)
FILLER_SOURCE = "filtered_inter_turns.json"  # where the N filler turns come from
_RUN_FILE = re.compile(r"^(?:error_)?(?P<rest>.+)_(?P<n>\d+)(?:inter)?turn$")


def run_of(source: str) -> dict[str, Any]:
    """Model, topic and number of filler turns from a generation file's name
    (``[error_]<model>_<topic>_<N>interturn.json``); each None when the name
    does not say it. A known topic settles where the model's name ends.

    >>> run_of("error_mistral8x7b_travel_restaurant_10interturn.json")
    {'model': 'mistral8x7b', 'topic': 'travel_restaurant', 'turns': 10}
    >>> run_of("travel_hotel.json")
    {'model': None, 'topic': 'travel_hotel', 'turns': None}
    """
    stem = PurePath(source).stem
    found = _RUN_FILE.match(stem)
    if not found:
        return {"model": None, "topic": stem if stem in TOPICS else None, "turns": None}
    rest = found["rest"]
    topic = next((t for t in TOPICS if rest.endswith("_" + t)), None)
    if topic is not None:
        model = rest[: -len(topic) - 1]
    else:
        model, _, topic = rest.partition("_")
    return {"model": model or None, "topic": topic or None, "turns": int(found["n"])}


JUDGE = "PrefEval-judge"  # the benchmark's own judge, as a recorded judge
CHECKS = ("acknow", "violate", "hallucinate", "helpful")
_ANSWER = re.compile(r"^\W*(yes|no)\b", re.I)


def recorded(analysis: object) -> dict[str, Any]:
    """The benchmark judge's four answers in a run file
    (``evaluation_error_analysis``) as a recorded judge's verdicts on the
    PrefEval protocol's checks: a yes/no answer is 1/0; an empty or other
    answer is left out (no verdict: PrefEval itself reads it as "no").

    >>> recorded({"acknow": {"answer": "Yes"}, "violate": {"answer": " no."},
    ...           "hallucinate": {"answer": ""}, "helpful": "?"})
    {'acknow': {'value': 1, 'scale': [0, 1]}, 'violate': {'value': 0, 'scale': [0, 1]}}
    """
    if not isinstance(analysis, dict):
        return {}
    found = {}
    for check in CHECKS:
        part = analysis.get(check)
        answer = part.get("answer") if isinstance(part, dict) else None
        said = _ANSWER.match(answer) if isinstance(answer, str) else None
        if said:
            found[check] = {"value": int(said[1].lower() == "yes"), "scale": [0, 1]}
    return found


def item_key(question: str) -> str:
    """The item's key across files: its ``question`` (whitespace and case
    aside), which PrefEval keeps the same across the explicit, implicit and
    mcq files and every run of a topic, where 4 of 56 ``preference``
    strings of travel_restaurant are reworded.

    >>> item_key("Where to eat?") == item_key(" where  to eat? ")
    True
    """
    import hashlib

    said = " ".join(question.split()).casefold()
    return hashlib.sha256(said.encode("utf-8")).hexdigest()[:16]


def method_of(source: str) -> str | None:
    """The method (PrefEval's task: zero-shot, remind, cot, rag_5,
    selfcritic, …) of a result file, from the folder under
    ``generation_results/`` its path names; None when it names none (a file
    given by name alone, or uploaded).

    >>> method_of("benchmark_results/explicit/generation_results/remind/travel_demo/x.json")
    'remind'
    >>> method_of("error_demo_travel_demo_2interturn.json") is None
    True
    """
    parts = PurePath(source).parts
    for index, part in enumerate(parts[:-2]):
        if part == "generation_results":
            return parts[index + 1]
    return None


def form_of(record: dict[str, Any]) -> str:
    """explicit, choice-based or persona-driven, from the item's fields."""
    conversation = record.get("conversation")
    if isinstance(conversation, dict) and "query" in conversation:
        return "choice-based"
    if "persona" in record or isinstance(conversation, dict):
        return "persona-driven"
    return "explicit"


def prefeval(record: dict[str, Any], number: int, options: Options) -> dict[str, Any]:
    """One item as a session (see the module); :class:`Skipped` names the
    field and what is wrong with it."""
    preference, question = _text(record, "preference"), _text(record, "question")
    answer = record.get("response_to_q")
    if not isinstance(answer, str):
        raise skipped("no_answer", field="response_to_q")
    if not answer.strip():
        raise skipped("empty_reply", field="response_to_q")
    run = run_of(options.source)
    form = form_of(record)
    history, profile = _context(record, form, preference)
    task = method_of(options.source)
    method = options.method if options.method != "model" else run["model"] or "model"
    if task and options.method == "model":  # model x method: mixtral-remind
        method = f"{method}-{task}"
    topic = run["topic"] or "topic"
    turns = "?" if run["turns"] is None else run["turns"]
    rounds = [{"round": 1, "user_message": question, "responses": {method: answer}}]
    where = f"{form}/{task}" if task else form  # runs of two methods never collide
    session = make_session(
        f"{where}/{topic}/{turns}turn/{number - 1}", profile, options, rounds
    )
    verdicts = recorded(record.get("evaluation_error_analysis"))
    if verdicts:  # the benchmark judge's verdicts ride on the reply they judge
        reply = {"text": answer, "judges": {JUDGE: verdicts}}
        session["rounds"][0]["responses"][method] = reply
    known = (
        "preference",
        "question",
        "response_to_q",
        "response_to_pref",
        "persona",
        "conversation",
    )
    session["meta"] = {
        "source": "prefeval",
        "form": form,
        "topic": run["topic"],
        "model": run["model"],
        "item": number - 1,
        "question": question,  # items of one topic match on it across files
        "item_key": item_key(question),
        # what the judge's checks hold the reply against (``$reference``)
        "reference": preference,
        "history": history,
        "inter_turns": {"count": run["turns"], "source": FILLER_SOURCE},
        "record": {k: v for k, v in record.items() if k not in known},
    }
    if form != "explicit":  # the model never saw it stated
        session["meta"]["hidden_preference"] = preference
    return session


def _text(record: dict[str, Any], key: str) -> str:
    value = record.get(key)
    if not isinstance(value, str) or not value.strip():
        raise skipped("missing_empty_text", field=key)
    return value


def _context(
    record: dict[str, Any], form: str, preference: str
) -> tuple[list[dict[str, Any]], str]:
    """The turns before the filler (``meta.history``) and the user profile:
    the stated preference (explicit), the persona (persona-driven), none
    (choice-based: ``--profile``, else the record is skipped)."""
    conversation = record.get("conversation")
    history: list[dict[str, Any]] = []
    if form == "explicit":
        history.append({"speaker": "user", "text": preference})
        reply = record.get("response_to_pref")
        if reply is not None and not isinstance(reply, str):
            raise skipped("not_text", field="response_to_pref")
        if reply is not None:  # the model's own reply to the preference
            history.append({"speaker": "assistant", "text": reply})
        return history, preference
    if form == "choice-based":
        parts = (
            ("user", "query"),
            ("assistant", "assistant_options"),
            ("user", "user_selection"),
            ("assistant", "assistant_acknowledgment"),
        )
        assert isinstance(conversation, dict)  # form_of found its query
        for speaker, key in parts:
            text = conversation.get(key)
            if not isinstance(text, str):
                raise skipped("missing_text", field=f"conversation.{key}")
            history.append({"speaker": speaker, "text": text, "scripted": True})
        return history, ""
    if not isinstance(conversation, dict) or not conversation:
        raise skipped("missing_turns", field="conversation")
    for key in sorted(conversation, key=_turn_number):
        turn = conversation[key]
        if not isinstance(turn, dict):
            raise skipped("not_turn_object", field=f"conversation.{key}")
        for speaker in ("user", "assistant"):
            text = turn.get(speaker)
            if not isinstance(text, str):
                raise skipped("missing_text", field=f"conversation.{key}.{speaker}")
            history.append({"speaker": speaker, "text": text, "scripted": True})
    persona = record.get("persona")
    return history, persona.strip() if isinstance(persona, str) else ""


def _turn_number(key: str) -> tuple[int, str]:
    """``"0"``, ``"1"``… (the files) or ``turn1``… (the README), in order."""
    digits = re.sub(r"\D", "", key)
    if not digits:
        raise skipped("not_numbered", field=f"conversation.{key}")
    return int(digits), key
