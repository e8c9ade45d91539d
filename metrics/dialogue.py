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


def user_message(round_: dict, response: dict) -> str:
    """On-policy logs may override the user message per method."""
    return response.get("user_message") or round_["user_message"]


def history(session: dict, method: str, upto: int) -> str:
    """That method's dialogue before round index ``upto``."""
    turns = []
    for round_ in session["rounds"][:upto]:
        response = round_["responses"][method]
        turns.append(
            f"User: {user_message(round_, response)}\nAssistant: {response['text']}"
        )
    return "\n\n".join(turns) or "(this is the first message)"


def sample_text(session: dict) -> str | None:
    """The sample dialogues joined by newlines; None when there are none."""
    dialogues = session.get("sample_dialogues")
    if isinstance(dialogues, str):
        dialogues = [dialogues]
    text = "\n".join(dialogues or [])
    return text if text.strip() else None
