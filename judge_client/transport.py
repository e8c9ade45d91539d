"""The wire under a judge call: one urllib3 pool of keep-alive connections per
judge host for the whole process, bodies read within a size and a deadline.

Why urllib3 and not ``requests`` (which is built on it): per call,
``requests`` merges settings, prepares and hooks a request and wraps the
response, about as much CPU as the call itself at hundreds of calls a
second; a worker also builds a client per chunk, so a session per client
opened new connections every chunk. ``bench/client_cpu.py`` measures the two.
HTTPS is verified against the system's certificates (``SSL_CERT_FILE`` and
``SSL_CERT_DIR`` are honoured), where ``requests`` used certifi's bundle.
"""

from __future__ import annotations

import heapq
import itertools
import socket
import threading
import urllib.request
from time import monotonic
from urllib.parse import urlsplit

import urllib3
from urllib3.exceptions import (
    ConnectTimeoutError,
    HTTPError,
    NewConnectionError,
    ProtocolError,
    ReadTimeoutError,
)

_MANAGERS: dict[tuple, urllib3.PoolManager] = {}
_MANAGERS_LOCK = threading.Lock()
# The names a failed call's note has always shown (they were requests').
_KINDS = ((NewConnectionError, "ConnectionError"), (ConnectTimeoutError, "ConnectTimeout"),
          (ReadTimeoutError, "ReadTimeout"), (ProtocolError, "ConnectionError"))  # fmt: skip


class TransportError(Exception):
    """The call failed on the wire; ``kind`` names how (``ReadTimeout``,
    ``DeadlineExceeded``, ...), for the row's note."""

    def __init__(self, kind: str):
        super().__init__(kind)
        self.kind = kind


def manager_for(url: str, size: int) -> urllib3.PoolManager:
    """The process's connections to the host of ``url``, at least ``size``
    kept alive, through the proxy the environment names for it (as
    ``requests`` reads ``*_proxy`` and ``no_proxy``)."""
    parts = urlsplit(url)
    key = (parts.scheme, parts.hostname, parts.port)
    with _MANAGERS_LOCK:
        found = _MANAGERS.get(key)
        if found is None or found.connection_pool_kw["maxsize"] < size:
            found = _MANAGERS[key] = _manager(parts.scheme, parts.hostname, size)
    return found


def _manager(scheme: str, host: str | None, size: int) -> urllib3.PoolManager:
    # block=False: past ``size`` a call opens a connection rather than wait
    proxy = urllib.request.getproxies_environment().get(scheme)
    if proxy and not urllib.request.proxy_bypass(host or ""):  # no_proxy
        return urllib3.ProxyManager(proxy, maxsize=size, block=False, retries=False)
    return urllib3.PoolManager(maxsize=size, block=False, retries=False)


def opener_for(url: str, size: int) -> tuple:
    """(what to call ``urlopen`` on, what to ask it for): the host's
    connection pool and the path, or through a proxy its manager and the
    whole URL. (The pool directly: a manager parses the URL and looks its
    pool up again on every call.)"""
    manager = manager_for(url, size)
    if isinstance(manager, urllib3.ProxyManager):
        return manager, url
    parts = urlsplit(url)
    target = parts.path + (f"?{parts.query}" if parts.query else "")
    return manager.connection_from_url(url), target


def timeouts(connect_s: float, read_s: float) -> urllib3.Timeout:
    return urllib3.Timeout(connect=connect_s, read=read_s)


def post(opener, target: str, body: bytes, headers: dict, timeout: urllib3.Timeout):
    """Send (``opener_for``); the response's body is left to :func:`read_body`."""
    try:
        return opener.urlopen(
            "POST", target, body=body, headers=headers, redirect=False,
            timeout=timeout, preload_content=False,
        )  # fmt: skip
    except (HTTPError, OSError) as exc:
        raise TransportError(_kind(exc)) from None


def _kind(exc: BaseException) -> str:
    for kind, name in _KINDS:
        if isinstance(exc, kind):
            return name
    return type(exc).__name__


class TooLarge(Exception):
    """A body over the limit: read no further."""


class _Deadlines:
    """One thread for every call's deadline (a timer thread per call cost
    more than the call at hundreds of calls a second): it cuts off each
    response still being read when its deadline passes."""

    def __init__(self):
        self._ready = threading.Condition()
        self._heap: list = []  # (deadline, order, [response or None])
        self._order = itertools.count()
        self._thread: threading.Thread | None = None

    def watch(self, deadline: float, response) -> list:
        entry = [response]
        with self._ready:
            heapq.heappush(self._heap, (deadline, next(self._order), entry))
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="judge-deadlines", daemon=True
                )
                self._thread.start()
            if self._heap[0][2] is entry:  # the first due: wake the thread
                self._ready.notify()  # (else its wait ends before this one)
        return entry

    @staticmethod
    def done(entry: list) -> None:
        entry[0] = None  # read in time: nothing to cut

    def _run(self) -> None:
        while True:
            with self._ready:
                while not self._heap or self._heap[0][0] > monotonic():
                    wait = self._heap[0][0] - monotonic() if self._heap else None
                    self._ready.wait(wait)
                _, _, entry = heapq.heappop(self._heap)
            if entry[0] is not None:
                cut_off(entry[0])


DEADLINES = _Deadlines()


def read_body(response, limit: int, deadline: float) -> bytes:
    """The body, read in pieces up to ``limit`` bytes and by ``deadline``
    (``time.monotonic``): past it the response is cut off, so a server
    dripping one byte at a time cannot hold a judge slot for longer. Raises
    :class:`TooLarge` or :class:`TransportError`."""
    watched = DEADLINES.watch(deadline, response)
    parts, size, complete = [], 0, False
    try:
        for part in response.stream(16_384):
            size += len(part)
            if size > limit:
                raise TooLarge
            parts.append(part)
        complete = True
    except TooLarge:
        raise
    except Exception as exc:  # cut off under the read, or the transport failed
        kind = "DeadlineExceeded" if monotonic() >= deadline else _kind(exc)
        raise TransportError(kind) from None
    finally:
        DEADLINES.done(watched)
        if not complete:
            response.close()  # a half-read connection is never reused
        response.release_conn()
    if monotonic() >= deadline:
        raise TransportError("DeadlineExceeded")
    return b"".join(parts)


def cut_off(response) -> None:
    """End a response another thread is reading: closing a socket does not
    wake a blocked ``recv`` on Linux, shutting it down does."""
    sock = getattr(getattr(response, "connection", None), "sock", None)
    if sock is None:  # the connection was handed back once the body was read
        fp = getattr(getattr(response, "_fp", None), "fp", None)
        sock = getattr(getattr(fp, "raw", None), "_sock", None)
    try:
        if sock is not None:
            sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass  # already closed
    response.close()
