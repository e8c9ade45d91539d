"""The embedded worker forked from a command's own process (issue 32).

``flask evaluate`` spawned its worker as a new interpreter, which imported
the app again while the command had it loaded already: the judge waited
for it. A command that is about to wait for its run forks the worker
instead, before it loads SQLAlchemy: the child builds its own app from the
same settings, makes its own storage (SQLAlchemy imported on the second
core while the command imports it to store the run; the first of the two
to reach a new database upgrades it while the other waits,
``store/__init__.py``) and consumes at once. It inherits no database
connection.

Only a command forks, before it starts anything: its one other thread may
be Flask-Limiter's in-memory storage timer, which the child never uses (it
builds its own app). A web process, with its server's threads and sockets,
spawns (pipeline/worker/worker_process.py), as does a restart. The child:

* closes the instance lock's descriptor (the lock must end with the
  supervisor, not with its worker) and its copy of the lifeline's write end
  (else it would never see the end of file that tells it the command is
  gone);
* reads nothing of the command's stdin and writes its stdout to stderr (the
  command's stdout is its results document);
* never returns and never runs the command's exit handlers (``os._exit``).

:class:`ForkedWorker` is the supervisor's handle, shaped like the
``subprocess.Popen`` of a spawned worker (``pid``, ``poll``, ``wait``,
``kill``, ``stdin``).
"""

from __future__ import annotations

import logging
import os
import random
import select
import signal
import subprocess
import sys
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)


class ForkedWorker:
    """A forked worker, waited for through its pidfd (no polling)."""

    def __init__(self, pid: int, lifeline: int):
        self.pid = pid
        self.stdin = os.fdopen(lifeline, "wb", buffering=0)  # closed: end of file
        self.returncode: int | None = None
        self._pidfd = os.pidfd_open(pid)
        self._lock = threading.Lock()

    def poll(self) -> int | None:
        if self.returncode is None and self._ended(0):
            self._reap()
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None and not self._ended(timeout):
            raise subprocess.TimeoutExpired(f"worker {self.pid}", timeout or 0)
        return self._reap()

    def kill(self) -> None:
        if self.returncode is None:
            os.kill(self.pid, signal.SIGKILL)

    def _ended(self, timeout: float | None) -> bool:
        if self.returncode is not None:
            return True
        return bool(select.select([self._pidfd], [], [], timeout)[0])

    def _reap(self) -> int:
        with self._lock:  # the supervisor's thread and stop() may both wait
            if self.returncode is None:
                _, status = os.waitpid(self.pid, 0)
                self.returncode = os.waitstatus_to_exitcode(status)
            # the pidfd stays open: another thread may be about to select()
            # on it, and a command forks one worker in its life
            return self.returncode


def available() -> bool:
    """Whether this system has pidfds (Linux 5.3), through which the
    supervisor waits for a forked worker; without them a command spawns."""
    try:
        os.close(os.pidfd_open(os.getpid()))
    except (AttributeError, OSError):
        return False
    return True


def fork(serve: Callable[[int], None], lock_descriptor: int | None) -> ForkedWorker:
    """Fork; the child calls ``serve(lifeline)`` (which never returns) with
    the read end of its lifeline pipe."""
    read, write = os.pipe()
    for stream in (sys.stdout, sys.stderr):  # else the child writes it again
        stream.flush()
    pid = os.fork()
    if pid == 0:  # the worker
        try:
            os.close(write)
            if lock_descriptor is not None:
                os.close(lock_descriptor)
            devnull = os.open(os.devnull, os.O_RDONLY)
            os.dup2(devnull, 0)
            os.close(devnull)
            os.dup2(2, 1)
            random.seed()  # not the command's sequence
            serve(read)
        except BaseException:
            log.exception("the worker process failed")
        finally:
            os._exit(1)  # serve returned or raised: the supervisor restarts it
    os.close(read)
    return ForkedWorker(pid, write)
