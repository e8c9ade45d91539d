"""What an annotation queue holds (pure): a stratified random sample of a
run's items and what an annotator is shown of one, blind.

Strata are (method, round). Each stratum's present replies are shuffled
with the seed and the strata are drawn from in turn, round by round and
within a round method by method, until ``size`` items are taken: every
method is represented as evenly as the file allows (a sample smaller than
the strata keeps the early rounds of every method, not every round of the
first methods); the sample is then shuffled, so methods come in random
order.

>>> sessions = [{"session_id": f"s{i}", "rounds": [
...     {"round": k, "responses": {"A": {"text": "a"}, "B": {"text": "b"}}}
...     for k in (1, 2)]} for i in range(10)]
>>> items = stratified_sample(sessions, ["A", "B"], size=8, seed=1)
>>> len(items), sorted({(m, k) for _, k, m in items})
(8, [('A', 1), ('A', 2), ('B', 1), ('B', 2)])
>>> stratified_sample(sessions, ["A", "B"], size=8, seed=1) == items  # the seed fixes it
True
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from typing import Any

from dataset.replies import replied

# an item: [session id, round number, method]
Item = list[str | int]


def stratified_sample(
    sessions: Iterable[dict[str, Any]], methods: list[str], size: int, seed: int
) -> list[Item]:
    """``[session_id, round, method]`` of up to ``size`` present replies.
    Each stratum keeps a uniform reservoir of ``size`` (Algorithm R), so a
    file of any length is read once in bounded memory."""
    draw = random.Random(seed)
    strata: dict[tuple[int, int], list[Item]] = {}
    seen: dict[tuple[int, int], int] = {}
    for session in sessions:
        for round_ in session["rounds"]:
            for position, method in enumerate(methods):
                if replied(round_, method):
                    key = (round_["round"], position)
                    item: Item = [session["session_id"], round_["round"], method]
                    _keep(strata.setdefault(key, []), seen, key, item, size, draw)
    pools = [strata[key] for key in sorted(strata)]
    for pool in pools:
        draw.shuffle(pool)
    taken: list[Item] = []
    while len(taken) < size and any(pools):
        for pool in pools:
            if pool and len(taken) < size:
                taken.append(pool.pop())
    draw.shuffle(taken)
    return taken


def _keep(
    pool: list[Item],
    seen: dict[tuple[int, int], int],
    key: tuple[int, int],
    item: Item,
    size: int,
    draw: random.Random,
) -> None:
    """Algorithm R: after n items every one is in the pool with chance size/n."""
    seen[key] = count = seen.get(key, 0) + 1
    if len(pool) < size:
        pool.append(item)
        return
    slot = draw.randrange(count)
    if slot < size:
        pool[slot] = item


def item_view(
    session: dict[str, Any], round_number: int, method: str
) -> dict[str, Any]:
    """What the annotator sees of one item: the user, the dialogue so far
    (the user's messages and this method's replies) and the reply to label.
    No method name, no score: the page is blind.

    >>> session = {"user_profile": "p", "user_personality": "q", "rounds": [
    ...     {"round": 1, "user_message": "hi", "responses": {"A": {"text": "yo"}}},
    ...     {"round": 2, "user_message": "and?", "responses": {"A": {"text": "so"}}}]}
    >>> view = item_view(session, 2, "A")
    >>> view["history"], view["response"], "A" in str(view)
    ([{'user': 'hi', 'reply': 'yo'}], 'so', False)
    """
    history, current = [], None
    for round_ in session["rounds"]:
        reply = round_["responses"].get(method)
        if round_["round"] == round_number:
            current = round_, reply
            break
        history.append(
            {"user": round_["user_message"], "reply": reply["text"] if reply else None}
        )
    if current is None or current[1] is None:
        raise KeyError(f"round {round_number} has no reply of this method")
    round_, reply = current
    return {
        "profile": session["user_profile"],
        "personality": session["user_personality"],
        "history": history,
        "user_message": reply.get("user_message") or round_["user_message"],
        "response": reply["text"],
    }
