"""Extract every message of the code and templates into locales/messages.pot
and bring the zh/ko catalogs in line: new messages get an empty msgstr (the
translation test then fails until they are filled, e.g. with
scripts/fill_catalog.py), removed ones are dropped. Catalogs are written
sorted and without source locations, so diffs show only real changes.

Usage: python scripts/update_catalogs.py      (make messages)
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from babel.messages.pofile import read_po, write_po

ROOT = Path(__file__).resolve().parents[1]
LOCALES = ROOT / "locales"
LANGUAGES = ("zh", "ko")


def extract() -> Path:
    pot = LOCALES / "messages.pot"
    pybabel = Path(sys.executable).with_name("pybabel")
    command = [
        str(pybabel),
        "extract",
        "-F",
        "babel.cfg",
        "-k",
        "_l",
        "--no-location",
        "--sort-output",
        "-o",
        str(pot),
        ".",
    ]
    subprocess.run(command, cwd=ROOT, check=True, capture_output=True)
    return pot


def update(lang: str, template) -> list[str]:
    path = LOCALES / lang / "LC_MESSAGES" / "messages.po"
    with path.open("rb") as po:
        catalog = read_po(po, locale=lang)
    catalog.update(template, no_fuzzy_matching=True)
    catalog.obsolete.clear()
    with path.open("wb") as po:
        write_po(po, catalog, width=76, sort_output=True, no_location=True)
    return [message.id for message in catalog if message.id and not _filled(message)]


def _filled(message) -> bool:
    """Every form translated (a plural message has one per plural form)."""
    forms = message.string if isinstance(message.string, tuple) else (message.string,)
    return all(forms)


def main() -> None:
    with extract().open("rb") as pot:
        template = read_po(pot)
    for lang in LANGUAGES:
        missing = update(lang, template)
        print(f"{lang}: {len(missing)} message(s) to translate")


if __name__ == "__main__":
    main()
