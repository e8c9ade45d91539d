"""A suite's rows read a part at a time (``metrics/row_source.py`` over
``store/suite_rows.py``): each part holds exactly the rows a table of the
whole suite would select, in the same order; counts, judges and the dict
view agree with that table."""

from __future__ import annotations

import pytest

from metrics import counts, registry, row_source
from metrics.columns import RowColumns
from metrics.suites.alignment import length_control, rank_checks
from store import suite_rows
from tests import aggregate_rows as data
from tests.metrics.test_aggregate_equality import store_run

ALIGNMENT = registry.get("alignment")


@pytest.fixture
def stored(any_storage):
    """(source, in-memory table) of the alignment rows of a judge panel run."""
    rows = data.synthetic_rows("panel", "shuffled")
    run = store_run(any_storage, rows)
    mine = sorted(data.rows_of_suite(rows)(ALIGNMENT), key=data.key_order)
    table = RowColumns.from_rows(mine)
    return suite_rows.source(any_storage.engine, run.id, ALIGNMENT), table


def test_a_part_holds_only_its_metrics_in_the_tables_order(stored):
    source, table = stored
    part = row_source.part(source, ["al", "binary"])
    assert set(part.present("metric")) == {"al", "binary"}
    assert len(part) == len(table.where(["al", "binary"], scored=False))
    for metric in ("al", "binary"):
        assert part.session_means(metric) == table.session_means(metric)
        assert part.values(part.where(metric)) == table.values(table.where(metric))


def test_prefixes_read_keyed_metrics(stored):
    source, table = stored
    part = source.load((), ("al_sample@",))
    keyed = [m for m in table.present("metric") if m.startswith("al_sample@")]
    assert keyed and sorted(part.present("metric")) == sorted(keyed)


def test_the_last_part_is_kept_until_another_is_read():
    class Reader:
        def __init__(self):
            self.reads = []

        def rows(self, ids, prefixes, judge, details):
            self.reads.append(ids)
            return [[("s", 1, "M", metric, 1.0, "ok", "") for metric in ids]]

    reader = Reader()
    source = row_source.RowSource(reader)
    first = source.load(["a"])
    assert source.load(["a"]) is first and reader.reads == [("a",)]
    source.load(["b"])
    assert source.load(["a"]) is not first and len(reader.reads) == 3


def test_groups_streamed_from_the_database_equal_the_tables(stored):
    source, table = stored
    for metric in ("al", "binary", "al_style"):
        for by in ("round", "session"):
            streamed = sorted(row_source.groups(source, metric, by), key=repr)
            assert streamed == sorted(row_source.groups(table, metric, by), key=repr)


def test_database_ranks_give_the_tables_statistics_bit_for_bit(stored):
    source, table = stored
    for judge in (None, "judge-a"):
        one = source if judge is None else source.of_judge(judge)
        mine = table if judge is None else table.subset(table.where(judge=judge))
        assert rank_checks.length_spearman(one) == rank_checks.length_spearman(mine)
        assert rank_checks.cross_mode_auc(one) == rank_checks.cross_mode_auc(mine)
        lc = length_control.length_controlled(one, data.METHODS)
        assert lc == length_control.length_controlled(mine, data.METHODS)
        assert any(value is not None for value in lc.values())


def test_session_counts_from_distinct_triples_equal_those_of_every_row(stored):
    source, table = stored
    assert counts.session_counts(source) == counts.session_counts(table)


def test_one_judge_of_a_panel(stored):
    source, table = stored
    assert source.judge_names() == sorted(table.present("judge"))
    for judge in ("judge-a", "judge-b+10"):
        own = source.of_judge(judge).load(None)
        assert own.present("judge") == [judge]
        expected = table.subset(table.where(scored=False, judge=judge))
        assert own.session_means("al") == expected.session_means("al")


def test_a_suite_written_for_dict_rows_iterates_a_source(stored):
    source, table = stored
    assert list(source) == list(table)


def test_tables_and_dicts_pass_through_part():
    row = {
        "session_id": "s",
        "method": "M",
        "metric": "x",
        "value": 1.0,
        "status": "ok",
    }
    table = RowColumns.from_rows([row])
    assert row_source.part(table, ["y"]) is table
    assert row_source.readable(table) is table
    assert len(row_source.part([row], ["x"])) == 1
