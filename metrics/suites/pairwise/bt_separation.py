"""Separation in pairwise comparisons: when some methods won every
comparison against the rest (or lost every one), the Bradley–Terry
likelihood keeps rising as their strengths run off to infinity, so no
finite maximum-likelihood strength exists (Zermelo 1929; Ford 1957: it does
exactly when the graph of "i won at least part of a comparison with j" is
strongly connected). Reporting a number there would report the penalty, not
the data; the pairwise suite reports the separation instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray


def separation(wins: NDArray[np.float64], methods: list[str]) -> dict[str, Any] | None:
    """When some methods won every comparison against the rest (or lost
    every one), no finite maximum-likelihood strength exists: the groups
    nobody outside beat and the groups that never beat anyone outside.
    None when every method beat, and was beaten by, the others' side
    (the comparison graph of partial wins is strongly connected).

    A group that was never compared with any method outside it is neither:
    the methods are in ``apart`` (groups not compared with each other).

    >>> import numpy as np
    >>> sweep = np.array([[0, 2, 1], [0, 0, 1], [0, 1, 0]], dtype=float)
    >>> separation(sweep, ["A", "B", "C"])
    {'unbeaten': ['A'], 'winless': ['B', 'C']}
    >>> two_leagues = np.array([[0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 1], [0, 0, 1, 0]])
    >>> separation(two_leagues, ["A", "B", "C", "D"])
    {'apart': [['A', 'B'], ['C', 'D']]}
    """
    size = len(methods)
    beat = [[j for j in range(size) if j != i and wins[i][j] > 0] for i in range(size)]
    groups = _components(beat)
    if len(groups) <= 1:
        return None
    group_of = {i: g for g, members in enumerate(groups) for i in members}
    beaten_from_outside = {
        group_of[j] for i in range(size) for j in beat[i] if group_of[j] != group_of[i]
    }
    beats_outside = {
        group_of[i] for i in range(size) for j in beat[i] if group_of[j] != group_of[i]
    }
    alone = {
        g
        for g in range(len(groups))
        if g not in beaten_from_outside and g not in beats_outside
    }

    def names(picked: list[int]) -> list[str]:
        return sorted(methods[i] for g in picked for i in groups[g])

    if alone:  # never compared across: no sweep to report, a gap in the design
        linked = [g for g in range(len(groups)) if g not in alone]
        apart = [names([g]) for g in sorted(alone)] + (
            [names(linked)] if linked else []
        )
        return {"apart": sorted(apart)}
    unbeaten = [g for g in range(len(groups)) if g not in beaten_from_outside]
    winless = [g for g in range(len(groups)) if g not in beats_outside]
    return {"unbeaten": names(unbeaten), "winless": names(winless)}


def _components(edges: list[list[int]]) -> list[list[int]]:
    """Strongly connected components (Kosaraju; a few dozen nodes)."""
    size, order, seen = len(edges), [], set()
    for start in range(size):
        stack = [(start, iter(edges[start]))] if start not in seen else []
        seen.add(start)
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                order.append(stack.pop()[0])
            elif child not in seen:
                seen.add(child)
                stack.append((child, iter(edges[child])))
    reverse: list[list[int]] = [[] for _ in range(size)]
    for i in range(size):
        for j in edges[i]:
            reverse[j].append(i)
    groups, assigned = [], set()
    for start in reversed(order):
        if start in assigned:
            continue
        group, todo = [], [start]
        assigned.add(start)
        while todo:
            node = todo.pop()
            group.append(node)
            for other in reverse[node]:
                if other not in assigned:
                    assigned.add(other)
                    todo.append(other)
        groups.append(sorted(group))
    return groups
