"""The reductions finalize asks the database for (store/item_reads.py): one
metric's scored values group by group, and the items two metrics both scored."""

from store.item_reads import grouped_rows, item_pairs
from tests.store.test_storage import RUN_FIELDS, row


def stored_run(storage):
    run = storage.runs.create_run(**RUN_FIELDS)
    rows = [
        row("s1", 1, "Base", "al", 60.0),
        row("s1", 2, "Base", "al", 70.0),
        row("s2", 1, "Base", "al", 50.0),
        row("s1", 1, "Ours", "al", 90.0),
        row("s2", 1, "Ours", "al", None, status="unscored"),  # not scored: left out
        row("s1", 1, "Base", "al_binary", 1.0),
        row("s1", 1, "Ours", "al_binary", 1.0),
        row("s2", 1, "Ours", "al_binary", 0.0),  # its al was not scored
    ]
    storage.rows.upsert_rows({**r, "run_id": run.id} for r in rows)
    return run


def test_values_grouped_by_session_or_round_per_method(any_storage):
    run = stored_run(any_storage)
    engine = any_storage.engine
    by_session = list(grouped_rows(engine, run.id, "al", "session", None))
    assert by_session == [
        ("Base", "s1", [60.0, 70.0], [1, 2]),
        ("Base", "s2", [50.0], [1]),
        ("Ours", "s1", [90.0], [1]),
    ]
    by_round = [
        (m, r, v) for m, r, v, _ in grouped_rows(engine, run.id, "al", "round", None)
    ]
    assert by_round == [
        ("Base", 1, [60.0, 50.0]),
        ("Base", 2, [70.0]),
        ("Ours", 1, [90.0]),
    ]


def test_pairs_are_the_items_both_metrics_scored(any_storage):
    run = stored_run(any_storage)
    batches = list(item_pairs(any_storage.engine, run.id, ("al", "al_binary"), None))
    methods = [m for batch in batches for m in batch[0]]
    pairs = sorted(
        (m, x, y)
        for batch in batches
        for m, x, y in zip(batch[0], batch[1].tolist(), batch[2].tolist(), strict=True)
    )
    assert sorted(methods) == ["Base", "Ours"]
    assert pairs == [("Base", 60.0, 1.0), ("Ours", 90.0, 1.0)]
