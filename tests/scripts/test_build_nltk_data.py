"""scripts/build_nltk_data.py: offline WordNet and CMUdict for nltk and textstat."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.services import SUBPROCESS_DEADLINE_S

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "build_nltk_data.py"
WORDNET_SRC = Path("/usr/share/wordnet")
_spec = importlib.util.spec_from_file_location("build_nltk_data", SCRIPT)
build = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(build)

needs_wordnet = pytest.mark.skipif(
    not (WORDNET_SRC / "data.noun").is_file(),
    reason="Debian package wordnet-base is not installed",
)

# Runs in a child with NLTK_DATA set; the network and nltk's downloader fail.
OFFLINE_CHECK = textwrap.dedent(
    """
    import socket

    import nltk

    def refuse(*args, **kwargs):
        raise AssertionError(f"network or download attempted: {args}")

    socket.socket.connect = socket.create_connection = nltk.download = refuse

    import textstat
    from nltk.corpus import wordnet
    from textstat.backend.utils import get_cmudict

    happy = set(wordnet.synsets("happy"))
    assert happy, "no synsets for 'happy'"
    assert happy & set(wordnet.synsets("glad")), "'glad' and 'happy' share none"
    score = textstat.flesch_reading_ease("The cat sat on the mat. It was happy.")
    assert isinstance(score, float), score
    assert textstat.syllable_count("beautiful") == 3
    assert get_cmudict("en")["a"] == [["AH0"], ["EY1"]]
    print("offline ok")
    """
)


@pytest.fixture(scope="module")
def nltk_data(tmp_path_factory):
    if not (WORDNET_SRC / "data.noun").is_file():
        pytest.skip("Debian package wordnet-base is not installed")
    dest = tmp_path_factory.mktemp("nltk_data")
    assert build.main(["--dest", str(dest), "--wordnet-src", str(WORDNET_SRC)]) == 0
    return dest


@needs_wordnet
@pytest.mark.slow
def test_wordnet_and_textstat_work_offline(nltk_data):
    env = {**os.environ, "NLTK_DATA": str(nltk_data)}
    result = subprocess.run(
        [sys.executable, "-W", "error", "-c", OFFLINE_CHECK],
        env=env,
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_DEADLINE_S,
    )
    assert result.returncode == 0, result.stderr
    assert "offline ok" in result.stdout
    assert result.stderr == ""


@needs_wordnet
def test_second_run_changes_nothing(nltk_data, capsys):
    wordnet = nltk_data / "corpora" / "wordnet"
    before = {p.name: p.stat().st_mtime_ns for p in wordnet.iterdir()}
    assert build.main(["--dest", str(nltk_data)]) == 0
    out = capsys.readouterr().out
    assert "wordnet: up to date" in out
    assert "cmudict: up to date" in out
    assert {p.name: p.stat().st_mtime_ns for p in wordnet.iterdir()} == before


def test_missing_wordnet_warns_and_still_builds_cmudict(tmp_path, capsys):
    dest, missing = tmp_path / "nltk_data", tmp_path / "no-wordnet"
    assert build.build_wordnet(dest, missing) is False
    assert build.WORDNET_WARNING in capsys.readouterr().err
    assert not (dest / "corpora" / "wordnet").exists()

    assert build.main(["--dest", str(dest), "--wordnet-src", str(missing)]) == 0
    assert "WordNet unavailable: install Debian package wordnet-base" in (
        capsys.readouterr().err
    )
    assert (dest / "corpora" / "cmudict" / "cmudict").is_file()


def test_exits_1_when_cmudict_cannot_be_built(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "cmudict", None)  # import fails
    args = ["--dest", str(tmp_path), "--wordnet-src", str(tmp_path / "none")]
    assert build.main(args) == 1
    assert "ERROR: cannot build cmudict" in capsys.readouterr().err


def test_group_writable_dest_is_made_private(tmp_path):
    dest = tmp_path / "nltk_data"
    dest.mkdir()
    dest.chmod(0o777)
    build.build_cmudict(dest)
    for path in [dest, *dest.rglob("*")]:
        assert path.stat().st_mode & 0o022 == 0, path


def test_lexnames_is_the_standard_wordnet_30_file():
    lines = build.lexnames_text().splitlines()
    assert len(lines) == 45
    assert lines[0] == "00\tadj.all\t3"
    assert lines[3] == "03\tnoun.Tops\t1"
    assert lines[29] == "29\tverb.body\t2"
    assert lines[44] == "44\tadj.ppl\t3"


def test_cmudict_lines_use_nltk_format():
    source = [b"a AH0\n", b"a(2) EY1\n", b"aalen AA1 L AH0 N # place, german\n"]
    assert list(build.cmudict_lines(source)) == [
        "a 1 AH0\n",
        "a 2 EY1\n",
        "aalen 1 AA1 L AH0 N\n",
    ]
