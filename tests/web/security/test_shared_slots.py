"""At most N conversions at once across the instance's web processes
(web/security/shared_slots.py): a slot is a lock its holder's end releases."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from web.security.shared_slots import slot


def test_slots_are_counted_and_given_back(tmp_path):
    with (
        slot(tmp_path, "convert", 2) as first,
        slot(tmp_path, "convert", 2) as second,
        slot(tmp_path, "convert", 2) as third,
    ):
        assert (first, second, third) == (True, True, False)
    with slot(tmp_path, "convert", 2) as again:
        assert again


def test_a_killed_holder_keeps_no_slot(tmp_path):
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from web.security.shared_slots import slot\n"
            f"with slot({str(tmp_path)!r}, 'convert', 1):\n"
            "    print('held', flush=True); time.sleep(600)",
        ],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[3],
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        with slot(tmp_path, "convert", 1) as held:
            assert not held
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()
    with slot(tmp_path, "convert", 1) as held:
        assert held


def test_a_conversion_past_the_slots_is_refused_with_a_reason(app_factory, tmp_path):
    app = app_factory(CONVERT_SLOTS=1)
    client = app.test_client()
    source = tmp_path / "s.jsonl"
    source.write_text('{"conversations": []}\n')

    def post(lang: str = "en"):
        with source.open("rb") as stream:
            return client.post(
                f"/api/v1/convert?lang={lang}",
                data={"file": (stream, "s.jsonl"), "from": "sharegpt"},
                content_type="multipart/form-data",
            )

    with slot(app.instance_path, "convert", 1):  # another process converts
        busy = post()
        assert busy.status_code == 503 and busy.headers["Retry-After"] == "5"
        [error] = busy.get_json()["errors"]
        assert error["code"] == "convert_busy" and "1 other" in error["message"]
        assert "转换" in post("zh").get_json()["errors"][0]["message"]
    assert post().status_code == 400  # its own verdict again: nothing converted
