"""Views of a session that several suites render into judge prompts.

>>> session = {"rounds": [
...     {"round": 1, "user_message": "Hi", "responses": {"M": {"text": "Hello"}}},
...     {"round": 2, "user_message": "Tea?",
...      "responses": {"M": {"text": "Sure", "user_message": "Coffee?"}}}]}
>>> print(history(session, "M", 2))
User: Hi
Assistant: Hello
<BLANKLINE>
User: Coffee?
Assistant: Sure
>>> history(session, "M", 0), sample_text({"sample_dialogues": ["a", "b"]})
('(this is the first message)', 'a\\nb')
"""

from __future__ import annotations

from collections import deque
from typing import Any


def user_message(round_: dict[str, Any], response: dict[str, Any]) -> str:
    """On-policy logs may override the user message per method."""
    message: str = response.get("user_message") or round_["user_message"]
    return message


def history(session: dict[str, Any], method: str, upto: int) -> str:
    """That method's dialogue before round index ``upto``."""
    turns = []
    for round_ in session["rounds"][:upto]:
        response = round_["responses"][method]
        turns.append(
            f"User: {user_message(round_, response)}\nAssistant: {response['text']}"
        )
    return "\n\n".join(turns) or FIRST_MESSAGE


def sample_text(session: dict[str, Any]) -> str | None:
    """The sample dialogues joined by newlines; None when there are none."""
    dialogues = session.get("sample_dialogues")
    if isinstance(dialogues, str):
        dialogues = [dialogues]
    text = "\n".join(dialogues or [])
    return text if text.strip() else None


FIRST_MESSAGE = "(this is the first message)"


class History:
    """A method's dialogue so far, built turn by turn, within a budget of
    characters: the oldest turns are dropped first and the prompt says how
    many. Within the budget the text is exactly :func:`history`'s, so cached
    verdicts of earlier runs still apply.

    >>> window = History(budget=60)
    >>> window.add("Hi", "Hello"); window.add("Tea?", "Sure, green or black?")
    >>> print(window.text())
    (1 earlier turn omitted)
    <BLANKLINE>
    User: Tea?
    Assistant: Sure, green or black?
    >>> window.dropped, History(budget=None).text() == FIRST_MESSAGE
    (1, True)
    """

    def __init__(self, budget: int | None):
        self.budget = budget
        self.turns: deque[str] = deque()
        self.chars = 0  # of the kept turns, with their separators
        self.dropped = 0

    def add(self, user: str, assistant: str) -> None:
        turn = f"User: {user}\nAssistant: {assistant}"
        self.turns.append(turn)
        self.chars += len(turn) + (2 if len(self.turns) > 1 else 0)
        while (
            self.budget is not None and self.chars > self.budget and len(self.turns) > 1
        ):
            self.chars -= len(self.turns.popleft()) + 2
            self.dropped += 1

    def text(self) -> str:
        if not self.turns:
            return FIRST_MESSAGE
        body = "\n\n".join(self.turns)
        if self.budget is not None and len(body) > self.budget:  # one long turn
            body = "…" + body[-self.budget :]
        if self.dropped:
            plural = "turn" if self.dropped == 1 else "turns"
            return f"({self.dropped} earlier {plural} omitted)\n\n{body}"
        return body
