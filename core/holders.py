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
from pathlib import Path

HOST_CHARS = 60


def this_host() -> str:
    return socket.gethostname()[:HOST_CHARS]


def new_holder(pid: int | None = None) -> str:
    """A fresh name for this process (a forked child gets its own)."""
    return f"{this_host()}:{pid or os.getpid()}:{secrets.token_hex(4)}"


def gone(holder: str) -> bool:
    """True only for a holder of this host whose process has ended.

    >>> gone(new_holder())
    False
    >>> gone("elsewhere:1:abcd")
    False
    """
    host, _, rest = holder.partition(":")
    pid_text = rest.partition(":")[0]
    if host != this_host() or not pid_text.isdigit():
        return False
    return not _alive(int(pid_text))


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
