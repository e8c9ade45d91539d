"""Fill empty msgstr entries of locales/<lang>/LC_MESSAGES/messages.po from a
JSON mapping {msgid: translation} (a maintenance aid for new strings). A
plural message (ngettext) is keyed by its singular msgid; its translation is
a string, or a list of one per plural form of the language.

Usage: python scripts/fill_catalog.py zh translations.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from babel.messages.pofile import read_po, write_po

ROOT = Path(__file__).resolve().parents[1]


def fill(lang: str, mapping: dict[str, str]) -> list[str]:
    path = ROOT / "locales" / lang / "LC_MESSAGES" / "messages.po"
    with path.open("rb") as po:
        catalog = read_po(po)
    filled = []
    for message in catalog:
        if isinstance(message.id, tuple):  # ngettext: keyed by its singular
            key = message.id[0]
            if key in mapping and not all(message.string):
                found = mapping[key]
                forms = [found] if isinstance(found, str) else list(found)
                # one form per plural form of the language (zh, ko: one)
                message.string = tuple(
                    (forms + forms[-1:] * catalog.num_plurals)[: catalog.num_plurals]
                )
                filled.append(key)
        elif message.id and not message.string and message.id in mapping:
            message.string = mapping[message.id]
            filled.append(message.id)
    with path.open("wb") as po:
        write_po(
            po, catalog, width=76, omit_header=False, sort_output=True, no_location=True
        )
    return filled


if __name__ == "__main__":
    lang, source = sys.argv[1], sys.argv[2]
    done = fill(lang, json.loads(Path(source).read_text(encoding="utf-8")))
    print(f"{lang}: filled {len(done)}")
