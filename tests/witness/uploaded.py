"""The witness of the upload page (issue 56): files made from the witness's
plans (our format as the plan writes it, with replies missing, broken in a
drawn way, or in ALOE's layout), a plain reading of a file, and what the
page says of one.

The plain reading is written from the input-format contract alone
(``/work/shared/DESIGN.md`` section 4, ``docs/input-format.md``,
``docs/importers.md`` for ALOE's layout); it imports nothing from
``dataset/``. It finds the lines with an error (a file with one is not
accepted) and the warnings a valid file gets, grouped per code and path
as the docs say: each method lacking replies (``replies_missing``), an
empty personality, a field the format does not have.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from hypothesis import strategies as st

from tests.witness.plans import Plan

# docs/input-format.md's table: the fields of a session, of a round
SESSION_FIELDS = {
    "session_id",
    "user_profile",
    "user_personality",
    "rounds",
    "sample_dialogues",
    "attributes",
    "persona",
    "target_order",
    "ground_truth_slots",
    "meta",
}
ROUND_FIELDS = ("round", "user_message", "responses")


@dataclass
class Reading:
    """What the contract says of a file: the lines with an error (None: an
    error of the whole file), its sessions and methods (in the order they
    first appear), its warnings as ``{(code, path): [lines]}`` and, for
    ``replies_missing``, each method's missing replies and the replies the
    file could hold; ``foreign``: another tool's layout it is in."""

    errors: dict[int | None, list[str]] = field(default_factory=dict)
    sessions: int = 0
    methods: list[str] = field(default_factory=list)
    warnings: dict[tuple[str, str], list[int]] = field(default_factory=dict)
    missing: dict[str, int] = field(default_factory=dict)
    slots: int = 0
    foreign: str | None = None

    @property
    def accepted(self) -> bool:
        return not self.errors

    @property
    def error_lines(self) -> set[int]:
        return {line for line in self.errors if line is not None}

    def error(self, line: int | None, what: str) -> None:
        self.errors.setdefault(line, []).append(what)

    def warn(self, line: int, code: str, path: str) -> None:
        lines = self.warnings.setdefault((code, path), [])
        if line not in lines:
            lines.append(line)


def _nonblank(value) -> bool:
    return isinstance(value, str) and bool(value.strip())


def read(path: Path) -> Reading:
    """The plain reading of ``path`` (UTF-8, one session a line; a BOM, CRLF
    and blank lines allowed)."""
    reading = Reading()
    text = path.read_bytes().decode("utf-8").removeprefix("\ufeff")
    seen_ids: set[str] = set()
    sessions: list[tuple[int, list[dict]]] = []  # (line, its rounds) of sound lines
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            reading.error(number, "not JSON")
            continue
        if not isinstance(record, dict):
            reading.error(number, "not a JSON object")
            continue
        reading.foreign = reading.foreign or looks_like(record)
        rounds = _session(reading, number, record, seen_ids)
        if rounds is not None:
            sessions.append((number, rounds))
    _replies(reading, sessions)
    return reading


def _session(reading: Reading, number: int, record: dict, seen_ids: set[str]):
    """Checks one session; returns its rounds when they can be read."""
    before = len(reading.errors.get(number, []))
    session_id = record.get("session_id")
    if not (isinstance(session_id, str) and session_id.strip()):
        reading.error(number, "session_id: a non-empty string is required")
    elif session_id in seen_ids:
        reading.error(number, "session_id: already used")
    else:
        seen_ids.add(session_id)
    if not _nonblank(record.get("user_profile")):
        reading.error(number, "user_profile: a non-empty string is required")
    personality = record.get("user_personality")
    if not isinstance(personality, str):
        reading.error(number, "user_personality: a string is required")
    elif not personality:
        reading.warn(number, "empty_personality", "user_personality")
    for name in record:
        if name not in SESSION_FIELDS:
            reading.warn(number, "unknown_field", name)
    rounds = record.get("rounds")
    if not isinstance(rounds, list) or not rounds:
        reading.error(number, "rounds: a non-empty array is required")
        return None
    previous = 0
    for place, one in enumerate(rounds):
        where = f"rounds[{place}]"
        if not isinstance(one, dict):
            reading.error(number, f"{where}: an object is required")
            continue
        k = one.get("round")
        if not isinstance(k, int) or isinstance(k, bool) or k < 1:
            reading.error(number, f"{where}.round: an integer >= 1 is required")
        elif k <= previous:
            reading.error(number, f"{where}.round: not above the round before")
        else:
            previous = k
        if not isinstance(one.get("user_message"), str):
            reading.error(number, f"{where}.user_message: a string is required")
        responses = one.get("responses")
        if not isinstance(responses, dict) or not responses:
            reading.error(number, f"{where}.responses: a non-empty object is required")
            continue
        for method, reply in responses.items():
            text = reply.get("text") if isinstance(reply, dict) else reply
            if reply is not None and not isinstance(text, str):
                reading.error(number, f"{where}.responses.{method}: text is required")
        for name in one:
            if name not in ROUND_FIELDS:
                reading.warn(number, "unknown_field", f"{where}.{name}")
    if len(reading.errors.get(number, [])) > before:
        return None
    reading.sessions += 1
    return rounds


def _replies(reading: Reading, sessions: list[tuple[int, list[dict]]]) -> None:
    """The file's methods, its missing replies (null or absent: docs/
    input-format.md#missing-replies, one warning per method, on the lines
    lacking one) and whether any reply can be evaluated."""
    for _line, rounds in sessions:
        for one in rounds:
            for method in one["responses"]:
                if method not in reading.methods:
                    reading.methods.append(method)
    evaluable = False
    for line, rounds in sessions:
        for one in rounds:
            reading.slots += 1
            for method in reading.methods:
                reply = one["responses"].get(method)
                text = reply.get("text") if isinstance(reply, dict) else reply
                if reply is None:
                    reading.missing[method] = reading.missing.get(method, 0) + 1
                    reading.warn(line, "replies_missing", method)
                evaluable = evaluable or _nonblank(text)
    if sessions and not evaluable:
        reading.error(None, "no reply to evaluate")
    if not sessions and not reading.errors:
        reading.error(None, "no session")


def looks_like(record: dict) -> str | None:
    """ALOE's conversations file (docs/importers.md, ``../shared/formats/
    aloe.md``): a ``conversations`` list of ``user`` + ``assistant``."""
    turns = record.get("conversations")
    first = turns[0] if isinstance(turns, list) and turns else None
    if isinstance(first, dict) and "user" in first and "assistant" in first:
        return "aloe"
    return None


# --- breaking a file ---------------------------------------------------------

ERRORS = ("not_json", "not_object", "drop", "wrong_type", "duplicate")
WARNINGS = ("empty_personality", "unknown_field")


@dataclass(frozen=True)
class Breakage:
    """What is done to line ``line`` (a session) of the plan's file; the
    contract makes ``ERRORS`` an error of that line, ``WARNINGS`` a
    warning only."""

    kind: str
    line: int
    path: tuple = ()  # of the field dropped or mistyped
    value: object = None  # the mistyped value, or the broken line's text

    @property
    def is_error(self) -> bool:
        return self.kind in ERRORS


# a value of the wrong type for each field (docs/input-format.md's table)
WRONG = {
    "session_id": (7, ["s1"]),
    "user_profile": (["A student.", "Likes hiking."], 22),
    "user_personality": (3, ["curious", "shy"]),
    "rounds": ("three rounds", {"round": 1}),
    "round": ("1", 1.5, True, 0),
    "user_message": (42, None),
    "responses": (["a reply"], "a reply"),
    "reply": (5, {"txt": "a reply"}),
}


@st.composite
def breakages(draw, plan: Plan) -> Breakage:
    kinds = ERRORS + WARNINGS if plan.sessions > 1 else ERRORS[:-1] + WARNINGS
    kind = draw(st.sampled_from(kinds))
    line = draw(st.integers(2 if kind == "duplicate" else 1, plan.sessions))
    if kind == "not_json":  # the line cut short: an object never closed
        return Breakage(kind, line, value=draw(st.integers(1, 10_000)))
    if kind == "not_object":
        value = draw(st.sampled_from(([1, 2], "a session", 3, None)))
        return Breakage(kind, line, value=value)
    if kind not in ("drop", "wrong_type"):
        return Breakage(kind, line)
    k = draw(st.integers(0, plan.rounds - 1))
    places: list[tuple] = [
        (name,) for name in ("session_id", "user_profile", "user_personality")
    ]
    places += [("rounds",), *(("rounds", k, name) for name in ROUND_FIELDS)]
    if kind == "wrong_type":  # a reply of a drawn method
        places.append(("rounds", k, "responses", draw(st.sampled_from(plan.methods))))
    path = draw(st.sampled_from(places))
    if kind == "drop":
        return Breakage(kind, line, path)
    name = "reply" if len(path) == 4 else path[-1]
    return Breakage(kind, line, path, draw(st.sampled_from(WRONG[name])))


def broken_file(plan: Plan, breakage: Breakage, path: Path) -> Path:
    """The plan's file with ``breakage`` done to it."""
    sessions = plan.sessions_jsonl()
    lines = [json.dumps(s, ensure_ascii=False) for s in sessions]
    place = breakage.line - 1
    session = sessions[place]
    if breakage.kind == "not_json":
        cut = int(str(breakage.value)) % (len(lines[place]) - 1) + 1
        lines[place] = lines[place][:cut]
    elif breakage.kind == "not_object":
        lines[place] = json.dumps(breakage.value)
    else:
        if breakage.kind == "duplicate":
            session["session_id"] = sessions[place - 1]["session_id"]
        elif breakage.kind == "empty_personality":
            session["user_personality"] = ""
        elif breakage.kind == "unknown_field":
            session["notes"] = "kept by the lab"
        else:
            *parents, last = breakage.path
            holder = session
            for step in parents:
                holder = holder[step]
            if breakage.kind == "drop":
                del holder[last]
            else:
                holder[last] = breakage.value
        lines[place] = json.dumps(session, ensure_ascii=False)
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def aloe_file(plan: Plan, path: Path, unprofiled: set[int]) -> Path:
    """The plan as ALOE's conversations file, without ``profile`` in the
    records (numbered from 1) of ``unprofiled``."""
    plan.write_aloe(path)
    records = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
    for number, record in enumerate(records, start=1):
        if number in unprofiled:
            del record["profile"]
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    path.write_text(text, encoding="utf-8")
    return path


# --- what the page says --------------------------------------------------------

# what #check-result holds, read in the page (static/upload.js renders it)
SHOWN = """() => {
  const result = document.getElementById('check-result');
  const box = result.querySelector('section.problems');
  const heading = box && box.querySelector('h2');
  const accepted = result.querySelector('[data-testid=validation-warnings]');
  const items = (list) => list ? [...list.querySelectorAll('li')].map((li) => ({
    where: li.querySelector('.where')?.textContent ?? null,
    message: li.querySelector('.message')?.textContent.trim() ?? '',
    times: li.querySelector('.muted.small')?.textContent.trim() ?? null,
  })) : null;
  return {
    text: result.innerText,
    ok: result.querySelector('p.ok')?.textContent ?? null,
    heading: heading ? heading.textContent : null,
    after_heading: heading?.nextElementSibling?.dataset.testid ?? null,
    offers: result.querySelectorAll('[data-testid=convert-offer]').length,
    errors: box ? items(box.querySelector(':scope > ul')) : null,
    accepted_heading: accepted?.querySelector('h3')?.textContent ?? null,
    accepted_warnings: items(accepted),
    submit_disabled: document.getElementById('submit').disabled,
  };
}"""

# the profile field's label beside the Convert button
PROFILE_LABEL = """() => document.querySelector('[data-testid=convert-profile]')
  .closest('label').textContent.trim()"""


def line_of(where: str | None) -> int | None:
    """The number in "line 3" (in the page's language)."""
    found = re.search(r"\d+", where or "")
    return int(found[0]) if found else None


def quoted(text: str) -> list[str]:
    """The names a message puts in quotation marks (“…”)."""
    return re.findall(r"“([^”]+)”", text)
