"""CharacterBench (AAAI 2025) dimension files into our sessions (pure;
``docs/importers.md`` gives the mapping, ``../shared/formats/characterbench.md``
the layout as released).

A released file is one JSON array per evaluation dimension, named
``<dimension>_test.json``; a record holds no dimension of its own, so it is
read from the file's name (``Options.source``). Each record becomes one
session of one round: the dialogue's last item (the user's query) is the
round's user message, the earlier items are context kept in
``meta.history`` with their speakers read from the ``speaker`` field (never
from their position), and the evaluated reply is
``response_messages.response`` under the method named by
``response_messages.model`` (lower-cased: ``characterGLM`` and
``characterglm`` are one system). The character's persona goes to
``meta.character``: it is the evaluated model's role, not the user. The
human score (``annotation_score``) becomes the reply's human label for the
dimension on the dimension's own scale (``human.scores``,
``docs/input-format.md``).

>>> record = {"id": 7, "character_name": "Kit", "character_profile": "A fox.",
...     "user_name": "user", "user_profile": "A hiker.", "greeting": "Hello!",
...     "dialogue": [{"turn": 1, "speaker": "user", "utterance": "Hi"},
...                  {"turn": 1, "speaker": "Kit", "utterance": "Hey"},
...                  {"turn": 2, "speaker": "user", "utterance": "Who are you?"}],
...     "response_messages": {"model": "characterGLM", "response": "A fox."},
...     "annotation_score": 4}
>>> s = characterbench(record, 1, Options(source="engagement_test.json"))
>>> s["session_id"], s["rounds"][0]["user_message"], list(s["rounds"][0]["responses"])
('engagement:7', 'Who are you?', ['characterglm'])
>>> s["rounds"][0]["responses"]["characterglm"]["human"]
{'scores': {'engagement': {'value': 4, 'scale': [1, 5]}}}
>>> [(turn["speaker"], turn["text"]) for turn in s["meta"]["history"]]
[('character', 'Hello!'), ('user', 'Hi'), ('character', 'Hey')]
"""

from __future__ import annotations

import re
from pathlib import PurePath
from typing import Any

from dataset.turns import Options, make_session, skipped

JUDGE = "CharacterJudge"  # the benchmark's own fine-tuned judge (pred_* fields)


def recorded_judges(
    record: dict[str, Any], dimension: str, scale: tuple[int, int]
) -> dict[str, Any]:
    """Each ``pred_<variant>`` field as the verdict of the recorded judge
    ``CharacterJudge/<variant>`` on the dimension's scale (``judges`` of a
    reply, ``docs/input-format.md#recorded-judges``); a value that is not a
    number within the scale is no verdict: left out (kept in
    ``meta.record``), never moved onto the scale.

    >>> recorded_judges({"pred_zh": 3.0, "pred_en_sc": 2.4, "pred_en": 7,
    ...                  "pred_zh_f": "x"}, "engagement", (1, 5))
    {'CharacterJudge/zh': {'engagement': {'value': 3.0, 'scale': [1, 5]}}, \
'CharacterJudge/en_sc': {'engagement': {'value': 2.4, 'scale': [1, 5]}}}
    """
    low, high = scale
    found = {}
    for field, value in record.items():
        variant = field.removeprefix("pred_")
        if variant == field or not re.fullmatch(r"[a-z0-9_]{1,32}", variant):
            continue
        if type(value) not in (int, float) or not low <= value <= high:
            continue
        found[f"{JUDGE}/{variant}"] = {
            dimension: {"value": value, "scale": [low, high]}
        }
    return found


# each dimension's human scale (annotation_score), low and high: read from the
# released files for the first seven, from the benchmark's judge prompts for
# the others (../shared/formats/characterbench.md)
SCALES: dict[str, tuple[int, int]] = {
    "memory_consistency": (1, 4),
    "attribute_consistency_bot": (1, 4),
    "attribute_consistency_human": (1, 4),
    "behavior_consistency_human": (1, 3),
    "empathetic_responsiveness": (1, 4),
    "engagement": (1, 5),
    "human_likeness": (1, 5),
    "behavior_consistency_bot": (1, 4),
    "boundary_consistency": (1, 3),
    "emotion_self_regulation": (1, 4),
    "fact_accuracy": (1, 4),
    "morality_robustness": (1, 2),
    "morality_stability": (1, 2),
}
LANGUAGES = ("zh", "en")
# the fields a chosen language's version is read from (top level: zh;
# translation_en: en); the other version is kept whole in meta.translation
TEXT_FIELDS = (
    "character_name",
    "character_profile",
    "user_name",
    "user_profile",
    "greeting",
    "dialogue",
    "messages",
    "response_messages",
)
USER_WORDS = {"user", "用户"}
CHARACTER_WORDS = {"character", "bot", "assistant", "角色"}
NONE_WORDS = {"", "n/a", "none", "null"}  # a translation's word for "no value"


def dimension_of(source: str) -> str | None:
    """The dimension a released file's name gives (``engagement_test.json``,
    also ``engagement.json`` or ``engagement_test (1).json``): the longest
    known dimension its name starts with.

    >>> dimension_of("data/attribute_consistency_bot_test.json")
    'attribute_consistency_bot'
    >>> dimension_of("results.json") is None
    True
    """
    stem = PurePath(source).name.lower()
    found = [name for name in SCALES if re.match(rf"{name}(?![a-z])", stem)]
    return max(found, key=len) if found else None


def characterbench(
    record: dict[str, Any], number: int, options: Options
) -> dict[str, Any]:
    """One record as a session (see the module); :class:`Skipped` names the
    field and what is wrong with it."""
    dimension = dimension_of(options.source)
    if dimension is None:
        raise skipped("no_dimension", name=repr(PurePath(options.source).name))
    own = record.get("id")
    if isinstance(own, bool) or not isinstance(own, int | str) or not str(own).strip():
        raise skipped("bad_id", field="id")
    language = options.language if options.language in LANGUAGES else "zh"
    chosen, other = _versions(record, language)
    low, high = SCALES[dimension]
    score = record.get("annotation_score")
    if score is not None and (
        isinstance(score, bool)
        or not isinstance(score, int | float)
        or not low <= score <= high
    ):
        raise skipped(
            "off_scale",
            field="annotation_score",
            value=repr(score),
            dimension=dimension,
            low=low,
            high=high,
        )
    names = _speaker_names(record, chosen)
    history = _history(chosen, names)
    if not history or history[-1]["speaker"] != "user":
        raise skipped("last_not_user", field="dialogue")
    query = history.pop()
    if not query["text"].strip():
        raise skipped("empty_query", field="dialogue")
    replied = chosen.get("response_messages")
    if not isinstance(replied, dict):
        raise skipped("missing_object", field="response_messages")
    method = replied.get("model")
    if not isinstance(method, str) or not method.strip():
        raise skipped("missing_text", field="response_messages.model")
    text = replied.get("response")
    if not isinstance(text, str):
        raise skipped("missing_text", field="response_messages.response")
    if not text.strip():
        raise skipped("empty_reply", field="response_messages.response")
    method = method.strip().lower()
    rounds = [{"round": 1, "user_message": query["text"], "responses": {method: text}}]
    session = make_session(
        f"{dimension}:{str(own).strip()}",
        _text(chosen.get("user_profile")),
        options,
        rounds,
    )
    reply: dict[str, Any] = {"text": text}
    if score is not None:  # the human label, on the dimension's own scale
        reply["human"] = {"scores": {dimension: {"value": score, "scale": [low, high]}}}
    if judges := recorded_judges(record, dimension, (low, high)):
        reply["judges"] = judges
    if len(reply) > 1:
        rounds[0]["responses"][method] = reply
    kept = {
        k: v for k, v in record.items() if k not in (*TEXT_FIELDS, "translation_en")
    }
    session["meta"] = {
        "source": "characterbench",
        "dimension": dimension,
        "scale": [low, high],
        "language": language,
        "character": {
            "name": chosen.get("character_name"),
            "profile": _text(chosen.get("character_profile")),
            "greeting": _greeting(chosen),
        },
        "user_name": chosen.get("user_name"),
        "history": history,
        "query": query,
        "messages": chosen.get("messages"),
        "response_messages": replied,
        "reference": reference_of(dimension, chosen),
        "record": kept,  # id, scores, pred_*, data_source, … as released
        "translation": {"en" if language == "zh" else "zh": other},
    }
    if language == "en" and (
        extra := {k: v for k, v in chosen.items() if k not in TEXT_FIELDS}
    ):
        kept["translation_en"] = extra  # its own data_source, filter_result, …
    if isinstance(chosen.get("character_profile"), dict):
        session["meta"]["character"]["profile_fields"] = chosen["character_profile"]
    if isinstance(chosen.get("user_profile"), dict):
        session["meta"]["user_profile_fields"] = chosen["user_profile"]
    return session


# Where each dimension's reference is (../shared/formats/characterbench.md,
# "Dimension-specific reference fields"): (object, path, label) in order
REFERENCES: dict[str, tuple[tuple[str, tuple[str, ...], str], ...]] = {
    "memory_consistency": (
        ("messages", ("output", "dialogue_segments"), "Earlier character lines"),
        ("messages", ("output", "question"), "Question"),
    ),
    "attribute_consistency_bot": (
        ("messages", ("output", "query"), "Question"),
        ("messages", ("output", "domain"), "Attribute"),
        ("messages", ("output", "answer"), "Answer"),
    ),
    "attribute_consistency_human": (("messages", ("reference",), ""),),
    "behavior_consistency_bot": (("messages", ("output", "reference"), ""),),
    "behavior_consistency_human": (
        ("response_messages", ("character_style",), "Style"),
    ),
    "boundary_consistency": (("response_messages", ("reference_response",), ""),),
    "fact_accuracy": (("messages", ("output", "answer"), "Answer"),),
    "emotion_self_regulation": (("messages", ("output", "emotion"), "Emotion"),),
    "empathetic_responsiveness": (("messages", ("output", "emotion"), "Emotion"),),
}


def reference_of(dimension: str, chosen: dict[str, Any]) -> str:
    """The dimension's reference as text, for a judge prompt's reference
    slot ("" when the dimension has none or the record lacks it): each
    part found, a list as lines, an object as ``key: value`` lines.

    >>> reference_of("memory_consistency", {"messages": {"output": {
    ...     "dialogue_segments": ["It is called Wave."], "question": "Its name?"}}})
    'Earlier character lines:\\nIt is called Wave.\\nQuestion: Its name?'
    >>> reference_of("engagement", {"messages": {}})
    ''
    """
    parts = []
    for holder, path, label in REFERENCES.get(dimension, ()):
        value = chosen.get(holder)
        for step in path:
            value = value.get(step) if isinstance(value, dict) else None
        if isinstance(value, list):
            text = "\n".join(_value(item) for item in value if _value(item).strip())
        elif isinstance(value, dict):
            text = _text(value) or _text(value.get("utterance"))
        else:
            text = _text(value) if isinstance(value, str) else ""
        if not text.strip():
            continue
        joiner = "\n" if isinstance(value, list) or "\n" in text else " "
        parts.append(f"{label}:{joiner}{text}" if label else text)
    return "\n".join(parts)


def _versions(
    record: dict[str, Any], language: str
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The chosen language's fields and the other's (None when absent)."""
    zh = {k: record[k] for k in TEXT_FIELDS if k in record}
    en = record.get("translation_en")
    if en is not None and not isinstance(en, dict):
        raise skipped("not_object", field="translation_en")
    if language == "zh":
        return zh, en
    if en is None:
        raise skipped("no_translation", field="translation_en")
    return en, zh


def _speaker_names(record: dict[str, Any], chosen: dict[str, Any]) -> dict[str, str]:
    """Who a ``speaker`` value means, lower-cased: the words for user and
    character, and both parties' names in either language."""
    names = {word: "user" for word in USER_WORDS}
    names.update({word: "character" for word in CHARACTER_WORDS})
    versions = [record, chosen, record.get("translation_en") or {}]
    for role, key in (("user", "user_name"), ("character", "character_name")):
        for version in versions:
            name = version.get(key) if isinstance(version, dict) else None
            if isinstance(name, str) and name.strip().lower() not in NONE_WORDS:
                if names.get(name.strip().lower(), role) != role:
                    names[name.strip().lower()] = "?"  # both parties' name
                else:
                    names[name.strip().lower()] = role
    return names


def _history(chosen: dict[str, Any], names: dict[str, str]) -> list[dict[str, Any]]:
    """The greeting (a character turn) and the dialogue items, each with
    its speaker (``user``/``character``), the speaker as written, and its
    ``turn`` and ``label`` when the item has them."""
    dialogue = chosen.get("dialogue")
    if not isinstance(dialogue, list) or not dialogue:
        raise skipped("missing_list", field="dialogue")
    history = []
    if greeting := _greeting(chosen):
        history.append({"speaker": "character", "text": greeting, "greeting": True})
    for k, item in enumerate(dialogue):
        if not isinstance(item, dict):
            raise skipped("not_object", field=f"dialogue[{k}]")
        said, text = item.get("speaker"), item.get("utterance")
        role = names.get(said.strip().lower()) if isinstance(said, str) else None
        if role not in ("user", "character"):
            raise skipped(
                "unknown_speaker", field=f"dialogue[{k}].speaker", value=repr(said)
            )
        if not isinstance(text, str):
            raise skipped("missing_text", field=f"dialogue[{k}].utterance")
        turn = {"speaker": role, "text": text, "as_written": said}
        turn.update({key: item[key] for key in ("turn", "label") if key in item})
        history.append(turn)
    return history


def _greeting(chosen: dict[str, Any]) -> str:
    greeting = chosen.get("greeting")
    if not isinstance(greeting, str) or greeting.strip().lower() in NONE_WORDS:
        return ""
    return greeting


def _text(value: object) -> str:
    """A persona as text: a string as it is (a translation's ``N/A`` as
    none), an object as ``key: value`` lines, else none.

    >>> _text({"姓名": "Kit", "爱好": ["run", "read"]}), _text("N/A"), _text(None)
    ('姓名: Kit\\n爱好: run, read', '', '')
    """
    if isinstance(value, str):
        return "" if value.strip().lower() in NONE_WORDS else value.strip()
    if isinstance(value, dict):
        return "\n".join(f"{key}: {_value(item)}" for key, item in value.items())
    return ""


def _value(item: object) -> str:
    if isinstance(item, list):
        return ", ".join(str(part) for part in item)
    return str(item)
