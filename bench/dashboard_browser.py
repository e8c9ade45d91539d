"""The dashboard in Chromium (Playwright, Debian's chromium): time from
navigation to the first chart drawn, at 1440 x 900 and on a phone (390 x
844, 3x pixels, touch) with the CPU throttled 4x (CDP
``Emulation.setCPUThrottlingRate``); the JavaScript transferred before it
(bytes on the wire, headers included, from Resource Timing); the page's
height at 1440 px in screens of 900 px. Every load is a new browser context
(a cold cache). Issue 48's targets: 1.0 s and 2.5 s, 500 kB, 4 screens.

The run is ``sample_data.jsonl`` evaluated by every suite through the app,
its embedded worker and the scripted judge. The baseline is the same page
with the wheel's full plotly.js (``PLOTLY_BUNDLE=full``, switched in this
process); loads alternate between the two, medians of ROUNDS.

"The first chart drawn" is the first frame after the first
``.js-plotly-plot`` has its SVG main layer (a MutationObserver from the
document's start, then ``requestAnimationFrame``): Plotly draws a chart's
traces in the task that makes that layer."""

from __future__ import annotations

import logging
import os
import re
import statistics
import sys
import tempfile
import threading
from pathlib import Path

from werkzeug.serving import make_server

from bench.judge_orchestration import make_app, timed_run, warm_worker
from metrics import registry
from testing.judge_server import ScriptedJudge

ROOT = Path(__file__).resolve().parents[1]
ROUNDS = 5
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREEN = 900  # px: the height of the desktop viewport, one "screen"
DEVICES = {
    "1440": {"viewport": {"width": 1440, "height": SCREEN}},
    "390_cpu4x": {
        "viewport": {"width": 390, "height": 844},
        "device_scale_factor": 3,
        "is_mobile": True,
        "has_touch": True,
    },
}
THROTTLE = {"1440": 1, "390_cpu4x": 4}
TARGETS = {"1440": 1000, "390_cpu4x": 2500}
TARGET_JS_KB = 500
TARGET_SCREENS = 4
FIRST_CHART = """(() => {
  const drawn = () => document.querySelector(".js-plotly-plot svg.main-svg");
  const observer = new MutationObserver(() => {
    if (!drawn()) return;
    observer.disconnect();
    requestAnimationFrame(() => { window.__firstChart = performance.now(); });
  });
  observer.observe(document, { childList: true, subtree: true });
})();"""
JS_BEFORE = """(until) => performance.getEntriesByType("resource")
  .filter((entry) => entry.initiatorType === "script" || /\\.js(\\?|$)/.test(entry.name))
  .map((entry) => [entry.startTime < until, entry.transferSize])"""


def finished_run(workdir: Path, judge: ScriptedJudge):
    """The app and its run of sample_data.jsonl (every suite), the worker stopped."""
    app = make_app(workdir, 8)
    try:
        warm_worker(app)
        every = tuple(suite.name for suite in registry.suites())
        _, _, run = timed_run(app, ROOT / "sample_data.jsonl", judge.url, every)
    finally:
        app.extensions["worker"].stop()
    assert run.status == "done", run.status
    return app, run


BUNDLES = {"charts": "/vendor/charts/", "full": "/vendor/plotly-"}


def page_path(token: str, bundle: str) -> str:
    """The view link, with a query the app ignores: it keeps a rendered view
    page per query (web/views/pages.py), so each bundle has its own."""
    return f"/r/{token}?lang=en&plotly={bundle}"


def warm_server(app, token: str) -> None:
    """The server's own first-use work (the page's build, each plotly.js
    gzipped once per process) is done before any timed load."""
    client = app.test_client()
    for bundle, src_start in BUNDLES.items():
        app.config["PLOTLY_BUNDLE"] = bundle
        page = client.get(page_path(token, bundle)).get_data(as_text=True)
        sources = re.findall(r'<script src="([^"]+)"', page)
        assert any(src.startswith(src_start) for src in sources), (bundle, sources)
        for src in sources:
            client.get(src, headers={"Accept-Encoding": "gzip"}).close()


def load(browser, url: str, device: str) -> dict:
    """One cold load: ms to the first chart, JS kB before it and in all."""
    context = browser.new_context(**DEVICES[device])
    try:
        page = context.new_page()
        page.set_default_timeout(120_000)
        page.add_init_script(FIRST_CHART)
        if THROTTLE[device] > 1:
            cdp = context.new_cdp_session(page)
            cdp.send("Emulation.setCPUThrottlingRate", {"rate": THROTTLE[device]})
        page.goto(url)
        page.wait_for_function("window.__firstChart !== undefined")
        first = page.evaluate("window.__firstChart")
        page.wait_for_load_state("networkidle")
        scripts = page.evaluate(JS_BEFORE, first)
        height = page.evaluate("document.documentElement.scrollHeight")
    finally:
        context.close()
    return {
        "first_chart_ms": first,
        "js_kb_before_first_chart": sum(size for before, size in scripts if before)
        / 1000,
        "js_kb_all": sum(size for _, size in scripts) / 1000,
        "height_px": height,
    }


def measure(app, base: str, token: str) -> dict[str, dict[str, list[dict]]]:
    from playwright.sync_api import sync_playwright

    found: dict[str, dict[str, list[dict]]] = {
        bundle: {device: [] for device in DEVICES} for bundle in ("charts", "full")
    }
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, args=CHROMIUM_ARGS
        )
        try:
            for index in range(ROUNDS):
                print(f"  round {index + 1} of {ROUNDS}", file=sys.stderr, flush=True)
                for bundle in BUNDLES:
                    app.config["PLOTLY_BUNDLE"] = bundle
                    url = base + page_path(token, bundle)
                    for device in DEVICES:
                        found[bundle][device].append(load(browser, url, device))
        finally:
            browser.close()
    return found


def summary(found: dict[str, dict[str, list[dict]]]) -> dict:
    figures: dict = {}
    for bundle, prefix in (("charts", ""), ("full", "baseline_full_plotly_")):
        for device, loads in found[bundle].items():
            times = [round(one["first_chart_ms"]) for one in loads]
            figures[f"{prefix}first_chart_ms_{device}"] = round(
                statistics.median(times)
            )
            figures[f"{prefix}first_chart_ms_{device}_all"] = times
            js = statistics.median(one["js_kb_before_first_chart"] for one in loads)
            figures[f"{prefix}js_kb_before_first_chart_{device}"] = round(js, 1)
        desktop = found[bundle]["1440"]
        figures[f"{prefix}js_kb_all_1440"] = round(desktop[0]["js_kb_all"], 1)
        height = statistics.median(one["height_px"] for one in desktop)
        figures[f"{prefix}page_height_screens_1440"] = round(height / SCREEN, 2)
    for device, target in TARGETS.items():
        figures[f"target_first_chart_ms_{device}"] = target
    figures["target_js_kb_before_first_chart"] = TARGET_JS_KB
    figures["target_page_height_screens_1440"] = TARGET_SCREENS
    return figures


def run() -> dict:
    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # no line per request
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp, ScriptedJudge() as judge:
        app, finished = finished_run(Path(tmp), judge)
        server = make_server("127.0.0.1", 0, app, threaded=True)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            warm_server(app, finished.token)
            base = f"http://127.0.0.1:{server.server_port}"
            found = measure(app, base, finished.token)
        finally:
            server.shutdown()
            app.extensions["watchdog"].stop()
            app.extensions["storage"].engine.dispose()
    return {
        "name": f"dashboard in Chromium, cold cache (median of {ROUNDS})",
        **summary(found),
        # other work on the machine stretches every time: read them with it
        "load_average_1min_before_after": [
            round(load_before, 2),
            round(os.getloadavg()[0], 2),
        ],
    }


if __name__ == "__main__":
    import json

    print(json.dumps(run(), indent=2))
