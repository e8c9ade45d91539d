"""Words inside problem messages that come from code, not from a template:
JSON type names (``expected``/``found`` of ``wrong_type``) and the messages
of Python's JSON decoder (``detail`` of ``invalid_json``). ``translate``
shows them in the reader's language; the English message keeps them as they
are. A value not listed here (e.g. a decoder message of a newer Python) is
shown as is.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.i18n import _l

TYPE_NAMES = {
    "object": _l("object"),
    "array": _l("array"),
    "string": _l("string"),
    "number": _l("number"),
    "integer": _l("integer"),
    "boolean": _l("boolean"),
    "null": _l("null"),
    "value": _l("value"),
    "string or object": _l("string or object"),
    "string or array of strings": _l("string or array of strings"),
    "array of strings": _l("array of strings"),
}

DECODER_MESSAGES = {
    "Expecting value": _l("a value was expected"),
    "Expecting ',' delimiter": _l("a comma (,) was expected"),
    "Expecting ':' delimiter": _l("a colon (:) was expected"),
    "Expecting property name enclosed in double quotes": _l(
        "a field name in double quotes was expected"
    ),
    "Extra data": _l("more text follows the JSON object"),
    "Unterminated string starting at": _l("a string is not closed"),
    "Invalid control character at": _l("a control character inside a string"),
    "Invalid \\escape": _l("an invalid backslash escape"),
    "Invalid \\uXXXX escape": _l("an invalid \\uXXXX escape"),
    "Illegal trailing comma before end of object": _l(
        "a comma before the end of an object"
    ),
    "Illegal trailing comma before end of array": _l(
        "a comma before the end of an array"
    ),
    "lone UTF-16 surrogate escape": _l("a lone UTF-16 surrogate escape"),
    "NaN is not valid JSON": _l("NaN is not valid JSON"),
    "Infinity is not valid JSON": _l("Infinity is not valid JSON"),
    "-Infinity is not valid JSON": _l("-Infinity is not valid JSON"),
}

# Why an importer skipped a record (``reason`` of ``nothing_converted`` and
# the upload page's skipped records). The English reason names no option:
# the command line adds its flag (cli/convert.py), and the page, here, the
# form field the upload page's "Convert" offers (templates/index.html).
NO_PROFILE = "no system message or persona to use as user_profile"
SKIP_REASONS = {
    NO_PROFILE: _l(
        "no system message or persona to use as the user profile: write one in "
        "“User profile, for records that carry none” above and convert again"
    ),
}

WORDS = {
    "expected": TYPE_NAMES,
    "found": TYPE_NAMES,
    "detail": DECODER_MESSAGES,
    "reason": SKIP_REASONS,
}


def in_reader_language(params: Mapping[str, Any]) -> dict[str, Any]:
    """``params`` with the listed words translated.

    >>> in_reader_language({"expected": "object", "found": "number", "line": 3})
    {'expected': 'object', 'found': 'number', 'line': 3}
    """
    shown = dict(params)
    for name, words in WORDS.items():
        value = shown.get(name)
        if isinstance(value, str) and value in words:
            shown[name] = str(words[value])
    return shown
