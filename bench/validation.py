"""Upload validation on a 100 MB file: time vs a bare ``json.loads`` loop over
the same lines (target <= 2x), and peak RSS of the validating process
(target <= 150 MB). Each side runs in a fresh subprocess so the peak RSS
belongs to that side alone."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from testing.datagen import write_file

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "bench" / "data" / "validate_100mb.jsonl"

# Peak RSS from /proc/self/status VmHWM: unlike ru_maxrss it belongs to this
# address space, so the parent's memory at fork time does not leak into it.
_PEAK = "int(next(l for l in open('/proc/self/status') if l.startswith('VmHWM')).split()[1])"

_BASELINE = """
import json, sys, time
start = time.perf_counter()
with open(sys.argv[1], "rb") as f:
    for line in f:
        json.loads(line)
elapsed = time.perf_counter() - start
print(elapsed, PEAK)
"""

_VALIDATE = """
import sys, time
import dataset
start = time.perf_counter()
report = dataset.validate_file(sys.argv[1])
elapsed = time.perf_counter() - start
assert report.valid, report.to_dict()["errors"][:3]
print(elapsed, PEAK)
"""


def _measure(code: str, path: Path) -> tuple[float, float]:
    done = subprocess.run(
        [sys.executable, "-c", code.replace("PEAK", _PEAK), str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    seconds, max_rss_kb = done.stdout.split()
    return float(seconds), int(max_rss_kb) / 1024


def run(size_mb: int = 100) -> dict:
    path = write_file(
        DATA.with_name(f"validate_{size_mb}mb.jsonl"), size_mb * 1024 * 1024
    )
    base_s, base_rss = _measure(_BASELINE, path)
    valid_s, valid_rss = _measure(_VALIDATE, path)
    return {
        "name": "upload validation",
        "file_mb": round(path.stat().st_size / 2**20, 1),
        "baseline_json_loads_s": round(base_s, 3),
        "validate_s": round(valid_s, 3),
        "ratio": round(valid_s / base_s, 2),
        "target_ratio": 2.0,
        "peak_rss_mb": round(valid_rss, 1),
        "baseline_peak_rss_mb": round(base_rss, 1),
        "target_rss_mb": 150,
    }


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
