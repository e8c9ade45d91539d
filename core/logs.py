"""Log output: text for people (the default), or one JSON object per line
for log shippers (``LOG_FORMAT=json``, python-json-logger).

>>> import io, json, logging
>>> stream = io.StringIO()
>>> configure("json", stream=stream)
>>> logging.getLogger("pipeline.service.runs").warning("run %s failed", "abc")
>>> line = json.loads(stream.getvalue())
>>> line["message"], line["levelname"], line["name"]
('run abc failed', 'WARNING', 'pipeline.service.runs')
>>> configure("text")  # back to Python's default handling
"""

from __future__ import annotations

import logging
from typing import TextIO

FIELDS = "{asctime}{levelname}{name}{message}{process}{threadName}"
MARK = "_personasteer"  # the handler this module installed


def configure(
    log_format: str, stream: TextIO | None = None, level: int = logging.INFO
) -> None:
    """Install (or remove) the root handler of ``log_format``. Idempotent:
    each app created in one process replaces the handler, never adds one."""
    root = logging.getLogger()
    for handler in [h for h in root.handlers if getattr(h, MARK, False)]:
        root.removeHandler(handler)
    if log_format != "json":
        return
    from pythonjsonlogger.json import JsonFormatter

    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter(FIELDS, style="{"))
    setattr(handler, MARK, True)
    root.addHandler(handler)
    root.setLevel(level)
