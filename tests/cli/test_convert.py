"""``flask --app app convert`` (cli/convert.py) through the app's CLI runner:
a layout detected or named, the output validated, its refusals."""

import json
from pathlib import Path

from cli.convert import FOLDER_SUFFIXES, convert_command

SAMPLES = Path(__file__).resolve().parents[1] / "data" / "importers"


def test_a_detected_layout_is_converted_and_validated(runner, tmp_path):
    out = tmp_path / "converted.jsonl"
    result = runner.invoke(
        convert_command, [str(SAMPLES / "sharegpt.json"), "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "detected layout sharegpt" in result.output
    assert "; valid" in result.output
    sessions = [json.loads(line) for line in out.read_text().splitlines()]
    assert sessions and all(s["rounds"] for s in sessions)


def test_the_input_is_never_overwritten(runner):
    source = SAMPLES / "sharegpt.json"
    result = runner.invoke(convert_command, [str(source), "--out", str(source)])
    assert result.exit_code == 2
    assert "--out must not be the input file" in result.output


def test_a_folder_without_convertible_files_is_refused(runner, tmp_path):
    (tmp_path / "notes.txt").write_text("not a layout")
    result = runner.invoke(
        convert_command, [str(tmp_path), "--out", str(tmp_path / "o.jsonl")]
    )
    assert result.exit_code == 2
    assert "no .json, .jsonl or .csv file in this folder" in result.output
    assert ".txt" not in FOLDER_SUFFIXES
