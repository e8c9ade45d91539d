"""The floor a judge client can reach (issue 32): raw asyncio, one keep-alive
HTTP/1.1 connection per call in flight, request bodies prepared beforehand,
each reply read to its end and its JSON decoded, nothing stored. No retry,
no limit, no database: what is left is the judge's latency and the wire.

``python -m bench.floor_client URL CONCURRENCY BODIES`` sends every line of
BODIES (one JSON request body per line, as ``bench/floor.py`` records the
product's) to ``URL`` + ``/chat/completions`` and prints the calls made.
"""

from __future__ import annotations

import asyncio
import json
import sys
from urllib.parse import urlsplit


async def _connection(host: str, port: int, path: str, bodies, answered: list) -> None:
    reader, writer = await asyncio.open_connection(host, port)
    head = f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
    for body in bodies:  # a shared iterator: each connection takes the next
        writer.write(f"{head}Content-Length: {len(body)}\r\n\r\n".encode() + body)
        headers = await reader.readuntil(b"\r\n\r\n")
        status = int(headers.split(b" ", 2)[1])
        length = next(
            int(line.split(b":", 1)[1])
            for line in headers.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        )
        reply = json.loads(await reader.readexactly(length))
        answered.append(status == 200 and bool(reply["choices"][0]["message"]))
    writer.close()


async def send_all(url: str, concurrency: int, bodies: list[bytes]) -> list:
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    path = parts.path.rstrip("/") + "/chat/completions"
    shared, answered = iter(bodies), []
    await asyncio.gather(
        *(_connection(host, port, path, shared, answered) for _ in range(concurrency))
    )
    return answered


def main(url: str, concurrency: str, bodies_path: str) -> int:
    with open(bodies_path, "rb") as lines:
        bodies = [line.rstrip(b"\n") for line in lines if line.strip()]
    answered = asyncio.run(send_all(url, int(concurrency), bodies))
    print(json.dumps({"calls": len(answered), "ok": sum(answered)}))
    return 0 if all(answered) else 1


if __name__ == "__main__":
    raise SystemExit(main(*sys.argv[1:4]))
