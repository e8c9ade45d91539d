"""A run's settings as a frozen, typed spec (pipeline/run_spec.py): made
from what the run recorded, and the only thing the worker reads of them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pipeline.run_spec import RunSpec
from tests import crafted
from tests.pipeline_support import submit

ROOT = Path(__file__).resolve().parents[1]
WORKER_MODULES = ("execution.py", "run_judge.py", "dispatch.py", "finalizer.py")


def test_the_spec_is_what_the_run_recorded(app_factory, tmp_path, judge_server):
    app = app_factory(JUDGE_TEMPERATURE=0.3, JUDGE_HISTORY_CHARS=5000,
                      JUDGE_MODELS=["a", "b"])  # fmt: skip
    path = crafted.write(tmp_path / "s.jsonl", crafted.alignment_sessions())
    run_id = submit(app, path, judge_server, suites=["alignment", "pairwise"],
                    judge_models=["a", "b"], samples=2,
                    options={"pairwise_baseline": "Base"})  # fmt: skip
    app.config.update(JUDGE_TEMPERATURE=0.9, JUDGE_HISTORY_CHARS=100)
    spec = RunSpec.of(app.extensions["storage"].runs.get_run(run_id))
    assert spec.suites == ("alignment", "pairwise")
    assert dict(spec.suite_options) == {"pairwise_baseline": "Base"}
    assert (spec.judge.models, spec.judge.samples) == (("a", "b"), 2)
    assert (spec.judge.temperature, spec.judge.history_chars) == (0.3, 5000)
    with pytest.raises(TypeError):
        spec.suite_options["pairwise_baseline"] = "Ours"  # type: ignore[index]


@pytest.mark.parametrize("module", WORKER_MODULES)
def test_the_worker_reads_no_raw_options(module):
    """Settings reach the worker through RunSpec.of(run), never run.options."""
    text = (ROOT / "pipeline" / module).read_text(encoding="utf-8")
    assert not re.search(r"\brun\.options\b", text)
