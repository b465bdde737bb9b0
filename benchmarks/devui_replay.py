"""The dev UI on a large thread: 1,000 agent calls, one of which stores a 5 MB value.

    python benchmarks/devui_replay.py        # needs Debian's chromium and playwright

Measured (median of REPEATS, milliseconds): the server's answer to `/api/thread` (reading the
thread from a MemoryStore and encoding it) and its size; in headless Chromium, opening the
thread (fetch, parse, first render of the timeline and of step 0), opening the last step (the
state rebuilt from 1,000 steps' operations), opening the step that wrote the 5 MB value, and
expanding that value. One JSON line on stdout, a Markdown table on stderr. The tests assert
behaviour only (tests/network/devui/test_browser_replay.py); timings live here.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from network import ThreadRef  # noqa: E402
from network.devui import app  # noqa: E402
from network.threads import MemoryStore  # noqa: E402
from tests.network.agui.live import serve  # noqa: E402
from tests.network.devui.browser import chromium  # noqa: E402
from tests.network.devui.networks import long_network  # noqa: E402

STEPS = 1_000
BLOB_AT = 500
REPEATS = 5


def timed_click(page: Any, selector: str, done: str) -> float:
    started = time.perf_counter()
    page.click(selector)
    page.wait_for_selector(done)
    return (time.perf_counter() - started) * 1000


def main() -> None:
    network = long_network(STEPS, BLOB_AT)
    store = MemoryStore()
    anyio.run(lambda: network.run("go", thread=ThreadRef("t-large", store=store)))
    figures: dict[str, list[float]] = {
        "api_thread_ms": [],
        "open_thread_ms": [],
        "open_last_step_ms": [],
        "open_blob_step_ms": [],
        "expand_blob_ms": [],
    }
    size = 0
    with serve(app(network, store=store)) as url, chromium() as browser:
        for _ in range(REPEATS):
            started = time.perf_counter()
            response = httpx.get(url + "/api/thread", params={"id": "t-large"}, timeout=60)
            figures["api_thread_ms"].append((time.perf_counter() - started) * 1000)
            size = len(response.content)
        for _ in range(REPEATS):
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.goto(url)
            page.wait_for_selector("#threads .thread")
            figures["open_thread_ms"].append(
                timed_click(
                    page, ".thread[data-thread-id='t-large']", "#detail-title:text('Step #0')"
                )
            )
            page.evaluate("document.getElementById('timeline').scrollTop = 1e9")
            figures["open_last_step_ms"].append(
                timed_click(
                    page,
                    f".row[data-index='{STEPS - 1}']",
                    f"#detail-title:text('Step #{STEPS - 1}')",
                )
            )
            page.evaluate(f"document.getElementById('timeline').scrollTop = {BLOB_AT * 28 - 100}")
            figures["open_blob_step_ms"].append(
                timed_click(
                    page, f".row[data-index='{BLOB_AT}']", f"#detail-title:text('Step #{BLOB_AT}:')"
                )
            )
            figures["expand_blob_ms"].append(
                timed_click(
                    page,
                    ".state-key[data-key='blob'] > summary",
                    ".state-key[data-key='blob'] .tree",
                )
            )
            page.close()
    medians = {name: round(statistics.median(values), 1) for name, values in figures.items()}
    result = {"steps": STEPS, "api_thread_bytes": size, **medians}
    print(json.dumps(result))
    print("| figure | median (ms) |\n| --- | --- |", file=sys.stderr)
    for name, value in medians.items():
        print(f"| {name} | {value} |", file=sys.stderr)
    print(f"/api/thread: {size / 1e6:.1f} MB for {STEPS} steps", file=sys.stderr)


if __name__ == "__main__":
    main()
