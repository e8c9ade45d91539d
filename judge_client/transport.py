"""The wire under a judge call: aiohttp on the process's judge loop
(:mod:`judge_client.loop`), one session of keep-alive connections per judge
host for the whole process, bodies read within a size and a deadline.

Why aiohttp on one loop: against the scripted judge this client takes 0.62
CPU-seconds per 1,000 calls where the thread-per-call urllib3 client took
0.91 (``bench/client_cpu.py``), and a whole run less CPU in both modes
(bench/README.md). Before urllib3 there was ``requests``, slower still. Proxies come from the
environment (``*_proxy``, ``no_proxy``) and HTTPS is verified against the
system's certificates (``SSL_CERT_FILE`` and ``SSL_CERT_DIR`` are honoured).
Only coroutines on the judge loop may call :func:`fetch`.
"""

from __future__ import annotations

import asyncio
import urllib.request
from collections.abc import Mapping
from urllib.parse import urlsplit

import aiohttp

from judge_client.pacing import HEADERS

# (scheme, host, port) -> (session, the proxy to go through or None);
# used on the loop only
_SESSIONS: dict[
    tuple[str, str | None, int | None], tuple[aiohttp.ClientSession, str | None]
] = {}
READ_PIECE = 65_536
# The names a failed call's note has always shown (they were requests').
_KINDS = (
    (aiohttp.ConnectionTimeoutError, "ConnectTimeout"),
    (aiohttp.ServerTimeoutError, "ReadTimeout"),
    (aiohttp.ClientConnectionError, "ConnectionError"),
    (aiohttp.ClientPayloadError, "ConnectionError"),
    (aiohttp.ClientResponseError, "ConnectionError"),
    (OSError, "ConnectionError"),
)


class TransportError(Exception):
    """The call failed on the wire; ``kind`` names how (``ReadTimeout``,
    ``DeadlineExceeded``, ...), for the row's note."""

    def __init__(self, kind: str):
        super().__init__(kind)
        self.kind = kind


class TooLarge(Exception):
    """A body over the limit: read no further."""


def session_for(url: str) -> tuple[aiohttp.ClientSession, str | None]:
    """The process's connections to the host of ``url`` (on the loop), and
    the proxy the environment names for it (``*_proxy``, ``no_proxy``, read
    as ``requests`` reads them). No limit on the connections: the judge pool
    bounds the calls in flight. (Not aiohttp's ``trust_env``: it reads the
    environment and looks for a ``.netrc`` on a thread at every request,
    which took more CPU than the request itself.)"""
    parts = urlsplit(url)
    key = (parts.scheme, parts.hostname, parts.port)
    found = _SESSIONS.get(key)
    if found is None or found[0].closed:
        proxy = urllib.request.getproxies_environment().get(parts.scheme)
        if proxy and urllib.request.proxy_bypass(parts.hostname or ""):
            proxy = None  # no_proxy names the host
        connector = aiohttp.TCPConnector(limit=0)
        found = _SESSIONS[key] = (aiohttp.ClientSession(connector=connector), proxy)
    return found


async def close_sessions() -> bool:
    """Close every session (their hosts get a goodbye); False if none was
    open. ``judge_client.loop`` runs it at exit, on the loop they live on."""
    if not _SESSIONS:
        return False
    for session, _ in list(_SESSIONS.values()):
        await session.close()
    _SESSIONS.clear()
    return True


def timeouts(connect_s: float, read_s: float) -> aiohttp.ClientTimeout:
    """Per connection attempt and per read of the socket; the whole call's
    bound is the deadline given to :func:`fetch`."""
    return aiohttp.ClientTimeout(total=None, sock_connect=connect_s, sock_read=read_s)


async def fetch(
    url: str,
    body: bytes,
    headers: Mapping[str, str],
    timeout: aiohttp.ClientTimeout,
    limit: int,
    deadline_s: float,
) -> tuple[int, dict[str, str], bytes]:
    """POST ``body``; (status, its rate-limit headers, the body read up to
    ``limit`` bytes), all within ``deadline_s``: a server dripping one byte
    at a time holds a judge slot no longer. Raises :class:`TooLarge` or
    :class:`TransportError`."""
    session, proxy = session_for(url)
    try:
        async with asyncio.timeout(deadline_s):
            async with session.post(
                url,
                data=body,
                headers=headers,
                timeout=timeout,
                proxy=proxy,
                allow_redirects=False,
            ) as response:
                content = await _read(response, limit)
                said = {
                    name: response.headers[name]
                    for name in HEADERS
                    if name in response.headers
                }
                return response.status, said, content
    except TooLarge:
        raise
    except TimeoutError as exc:  # aiohttp's own timeouts are TimeoutErrors too
        kind = _kind(exc) if isinstance(exc, aiohttp.ClientError) else None
        raise TransportError(kind or "DeadlineExceeded") from None
    except (aiohttp.ClientError, OSError) as exc:
        raise TransportError(_kind(exc)) from None


async def _read(response: aiohttp.ClientResponse, limit: int) -> bytes:
    """The body in pieces, no further than ``limit`` bytes; a connection
    left half-read is closed, never reused."""
    if (response.content_length or 0) > limit:
        response.close()
        raise TooLarge
    parts, size = [], 0
    async for part in response.content.iter_chunked(READ_PIECE):
        size += len(part)
        if size > limit:
            response.close()
            raise TooLarge
        parts.append(part)
    return b"".join(parts)


def _kind(exc: BaseException) -> str:
    for kind, name in _KINDS:
        if isinstance(exc, kind):
            return name
    return type(exc).__name__
