"""Who holds a chunk lease or a judge request: a process named
``host:pid:nonce``, and whether it is known to be gone.

A holder on another host, or one whose process may only be stopped, is
never taken for dead: its claims last until their deadline (a stopped
process that comes back still brings the verdicts it paid for). Only a
process of this host that no longer exists (killed; a zombie counts as
gone) can be known dead at once.
"""

from __future__ import annotations

import os
import secrets
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

HOST_CHARS = 60
_UNDER_WAY: set[str] = set()  # this process's attempts now under way


def this_host() -> str:
    return socket.gethostname()[:HOST_CHARS]


def new_holder(pid: int | None = None) -> str:
    """A fresh name for this process (a forked child gets its own)."""
    return f"{this_host()}:{pid or os.getpid()}:{secrets.token_hex(4)}"


def gone(holder: str) -> bool:
    """True only for a holder of this host whose process has ended, or an
    attempt of this process that has ended.

    >>> gone(new_holder()), gone(new_holder() + ":0.1")
    (False, True)
    >>> gone("elsewhere:1:abcd")
    False
    """
    parts = holder.split(":", 3)
    pid_text = parts[1] if len(parts) > 1 else ""
    if parts[0] != this_host() or not pid_text.isdigit():
        return False
    if int(pid_text) == os.getpid():  # ours: only an attempt that ended
        return len(parts) == 4 and holder not in _UNDER_WAY
    return not _alive(int(pid_text))


@contextmanager
def attempt(holder: str) -> Iterator[str]:
    """An attempt of this process under ``holder`` (``process:attempt``):
    under way until the block ends, gone after."""
    _UNDER_WAY.add(holder)
    try:
        yield holder
    finally:
        _UNDER_WAY.discard(holder)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: it exists
        return True
    try:  # a killed child its parent has not reaped yet
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rpartition(")")[2].split()[0] != "Z"
