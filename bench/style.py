"""Style suite (NVCS + ERTD) throughput on 200,000 response rows, against a
naive baseline measured in the same run.

* batched: ``metrics.suites.style.run`` per chunk of 4 sessions (160 rows, the
  engine's default chunk): one CountVectorizer vocabulary per session, sparse
  dot products, Er(D) once per session.
* naive: per (sample dialogue, response) pair, a fresh CountVectorizer fitted
  on the two texts, sklearn ``cosine_similarity``, and Er(D) and Er(R) both
  computed for the row. It is measured on ``NAIVE_ROWS`` rows generated from a
  different seed (so textstat's own cache cannot carry over between the two
  sides) and extrapolated linearly to the full row count.

Only the suite's work is timed; generating sessions is not. Sessions come
from ``testing.datagen.session`` (10 rounds x 4 methods = 40 rows each).
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter

from sklearn.feature_extraction.text import CountVectorizer
from sklearn.metrics.pairwise import cosine_similarity

from config import PROJECT_ROOT
from metrics import lexicon
from metrics.suites import style
from testing.datagen import session

METHODS = ["Base", "RAG", "Ours", "Oracle"]
ROUNDS = 10
CHUNK_SESSIONS = 4
NAIVE_ROWS = 2_000


def _sessions(seed: int, count: int):
    rng = random.Random(seed)
    for index in range(count):
        yield session(rng, index, ROUNDS, METHODS)


def _batched(rows: int) -> tuple[float, Counter]:
    """Seconds spent in ``style.run`` for ``rows`` rows, and row statuses."""
    sessions = _sessions(7, rows // (ROUNDS * len(METHODS)))
    elapsed, statuses = 0.0, Counter()
    while chunk := [s for _, s in zip(range(CHUNK_SESSIONS), sessions, strict=False)]:
        start = time.perf_counter()
        out = style.run(chunk, METHODS, None, {})
        elapsed += time.perf_counter() - start
        statuses.update(f"{row['metric']} {row['status']}" for row in out)
    return elapsed, statuses


def _pairs(rows: int) -> list[tuple[str, str]]:
    pairs = []
    for item in _sessions(8, rows // (ROUNDS * len(METHODS))):
        reference = style.sample_text(item)
        for round_ in item["rounds"]:
            pairs += [(reference, round_["responses"][m]["text"]) for m in METHODS]
    return pairs


def _naive_nvcs(reference: str, text: str) -> float:
    vectorizer = CountVectorizer(analyzer="char", ngram_range=(1, 3), lowercase=False)
    counts = vectorizer.fit_transform([reference, text])
    return float(cosine_similarity(counts[0], counts[1])[0, 0])


def _naive(pairs: list[tuple[str, str]], with_ertd: bool = True) -> float:
    start = time.perf_counter()
    for reference, text in pairs:
        _naive_nvcs(reference, text)
        if with_ertd:
            style.readability(reference)
            style.readability(text)
    return time.perf_counter() - start


def _batched_nvcs_only(pairs: list[tuple[str, str]]) -> float:
    per_session = ROUNDS * len(METHODS)
    start = time.perf_counter()
    for first in range(0, len(pairs), per_session):
        group = pairs[first : first + per_session]
        style.nvcs_scores(group[0][0], [text for _, text in group])
    return time.perf_counter() - start


def run(rows: int = 200_000) -> dict:
    lexicon.configure(str(PROJECT_ROOT / "nltk_data"))
    style.readability("Load the pronunciation dictionary once.")  # not timed
    pairs = _pairs(NAIVE_ROWS)
    naive_s = _naive(pairs)
    naive_nvcs_s = _naive(pairs, with_ertd=False)
    batched_nvcs_s = _batched_nvcs_only(pairs)
    batched_s, statuses = _batched(rows)
    naive_rate = len(pairs) / naive_s
    return {
        "name": "style suite throughput (NVCS + ERTD)",
        "rows": rows,
        "batched_s": round(batched_s, 2),
        "batched_rows_per_s": round(rows / batched_s),
        "naive_rows_measured": len(pairs),
        "naive_rows_per_s": round(naive_rate),
        "naive_s_extrapolated": round(rows / naive_rate, 1),
        "speedup": round(rows / batched_s / naive_rate, 1),
        "nvcs_only_rows_per_s_batched_vs_naive": (
            f"{len(pairs) / batched_nvcs_s:.0f} vs {len(pairs) / naive_nvcs_s:.0f}"
            f" (on the {len(pairs):,} baseline rows)"
        ),
        "row_statuses": dict(sorted(statuses.items())),
        "note": (
            f"naive baseline (one CountVectorizer per pair, Er(D) per row) measured "
            f"on {len(pairs):,} rows from another seed, extrapolated to {rows:,}"
        ),
    }


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
