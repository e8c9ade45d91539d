"""``python -m bench convert_memory``: peak memory of ``flask --app app
convert`` on a ShareGPT JSON array of a given size (with an emoji in every
record: one non-ASCII character once made the whole text 4 bytes a
character), measured as the child process's maximum resident set size.

Issue 46's target: at most 300 MB held for a 200 MB file. :func:`served`
repeats the red team's figure for the upload page's convert: a 60 MB array
``POST``ed to ``/api/v1/convert`` of the app served in its own process
(it added 1.44 GB to a gunicorn worker); the server's peak RSS (``VmHWM``)
before and after."""

from __future__ import annotations

import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORDS = ("hello", "trail", "coffee", "mountain", "recipe", "weekend")


def write_array(path: Path, megabytes: int) -> int:
    """A ShareGPT export of about ``megabytes`` MB; returns its records."""
    rng = random.Random(1)
    size = records = 0
    with path.open("w", encoding="utf-8") as sink:
        sink.write("[")
        while size < megabytes << 20:
            turns = [
                {
                    "from": "human" if i % 2 == 0 else "gpt",
                    "value": " ".join(rng.choice(WORDS) for _ in range(120)),
                }
                for i in range(8)
            ]
            record = {
                "id": f"r{records}",
                "conversations": [
                    {"from": "system", "value": "Ana, 30, a nurse who hikes 😀"},
                    *turns,
                ],
            }
            text = json.dumps(record, ensure_ascii=False)
            sink.write(("," if records else "") + text)
            size, records = size + len(text.encode()), records + 1
        sink.write("]")
    return records


def run(megabytes: int = 200) -> dict:
    with tempfile.TemporaryDirectory() as folder:
        source, out = Path(folder) / "export.json", Path(folder) / "out.jsonl"
        records = write_array(source, megabytes)
        flask = Path(sys.executable).with_name("flask")
        started = time.monotonic()
        subprocess.run(
            [
                str(flask),
                "--app",
                "app",
                "convert",
                "--from",
                "sharegpt",
                str(source),
                "--out",
                str(out),
            ],
            cwd=ROOT,
            check=True,
            capture_output=True,
        )
        seconds = time.monotonic() - started
        peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return {
        "file_mb": megabytes,
        "records": records,
        "peak_rss_mb": round(peak_mb),
        "seconds": round(seconds, 1),
    }


def served(megabytes: int = 60) -> dict:
    import requests

    from bench.cost_drill import _mb
    from bench.load import start_server

    with tempfile.TemporaryDirectory() as folder:
        source = Path(folder) / "export.json"
        records = write_array(source, megabytes)
        process, base = start_server(Path(folder))
        try:
            requests.get(base + "/", timeout=60)
            before = _mb(process.pid, "VmHWM")
            started = time.monotonic()
            with source.open("rb") as stream:
                reply = requests.post(
                    base + "/api/v1/convert",
                    timeout=600,
                    data={"from": "sharegpt"},
                    files={"file": ("export.json", stream)},
                )
            seconds = time.monotonic() - started
            after = _mb(process.pid, "VmHWM")
        finally:
            process.terminate()
            process.wait(timeout=30)
    return {
        "file_mb": megabytes,
        "records": records,
        "status": reply.status_code,
        "converted": reply.headers.get("X-Sessions-Converted"),
        "server_peak_rss_mb_before": before,
        "server_peak_rss_mb_after": after,
        "added_mb": round(after - before, 1),
        "seconds": round(seconds, 1),
    }


if __name__ == "__main__":
    if sys.argv[1:2] == ["served"]:
        print(json.dumps(served(int(sys.argv[2]) if len(sys.argv) > 2 else 60)))
    else:
        print(json.dumps(run(int(sys.argv[1]) if len(sys.argv) > 1 else 200)))
