"""The dev UI stays responsive whatever a run says: an agent streaming 1 MiB of text.

The page draws a bounded part of every long text (the conversation's message, the open step's
answer, the run's output), cut with "show all" / "download", and redraws only what changed:
the streamed message is one element from its first delta to its last. Responsiveness is
asserted as behaviour with generous bounds (a trivial script answers, a screenshot is taken),
never as a speed.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import anyio.to_thread

from agents import Agent, ScriptedModel, TextDelta
from network import Network
from network.devui import app
from tests.network.agui.live import serve

# 1 MiB of one paragraph (words, no line break: the costliest text to lay out), opening with
# markup and a right-to-left override that must stay text.
HOSTILE = "<b>not bold</b><img src=x> \u202eevil "
TEXT = (HOSTILE + "".join(f"word{n % 1000:03d} " for n in range(131_072)))[: 1 << 20]
CHUNK = 256  # 4,096 deltas
GENEROUS = 10.0  # seconds a trivial script may take on a loaded machine; frozen, it took 68 s


class HeldTalker:
    """Streams TEXT in CHUNK-character deltas, and waits for `gate` before the last one, so
    the page can be looked at while the answer is still streaming."""

    def __init__(self, gate: threading.Event) -> None:
        self.inner = ScriptedModel([TEXT], name="talker")
        self.name = "talker"
        self.provider = "scripted"
        self.gate = gate

    async def complete(self, request: Any, on_chunk: Any = None) -> Any:
        response = await self.inner.complete(request)
        if on_chunk is not None:
            last = len(TEXT) - CHUNK
            for start in range(0, last, CHUNK):
                await on_chunk(TextDelta(TEXT[start : start + CHUNK]))
            await anyio.to_thread.run_sync(self.gate.wait, 120)
            await on_chunk(TextDelta(TEXT[last:]))
        return response


def answers_within(page: Any, bound: float) -> float:
    started = time.perf_counter()
    assert page.evaluate("1 + 1") == 2
    took = time.perf_counter() - started
    assert took < bound, f"a trivial script took {took:.1f} s"
    return took


def drawn_characters(page: Any, selector: str) -> int:
    return int(page.evaluate(f"document.querySelector({selector!r}).textContent.length"))


def test_a_run_answering_a_mebibyte_keeps_the_page_responsive(page: Any, tmp_path: Path) -> None:
    gate = threading.Event()
    talker = Agent("talker", model=HeldTalker(gate))
    with serve(app(Network("chatty", agents=[talker]))) as url:
        page.goto(url)
        page.wait_for_selector("#graph .node[data-agent='talker']")
        page.fill("#chat-input", "Say a lot.")
        page.click("#chat-send")
        page.click("#timeline .row[data-index='0']")  # the step under way, opened
        message = page.locator("#conversation li.message[data-role='assistant']")
        # All but the last delta are in: the message is drawn cut, with the whole a click away.
        show_all = message.locator("button.show-whole")
        show_all.wait_for()
        for _ in range(600):
            if show_all.inner_text() == f"show all {len(TEXT) - CHUNK:,} characters":
                break
            page.wait_for_timeout(100)
        assert show_all.inner_text() == f"show all {len(TEXT) - CHUNK:,} characters"
        page.evaluate(
            "document.querySelector(\"#conversation li.message[data-role='assistant']\")"
            ".streamedSince = 'the first check'"
        )
        answers_within(page, GENEROUS)
        page.screenshot(path=str(tmp_path / "streaming.png"), timeout=GENEROUS * 1000)
        assert drawn_characters(page, "#detail-answer") <= 20_000 + 10
        assert page.locator("#detail-body button.show-whole").count() == 1

        gate.set()
        page.wait_for_selector("#status:text('finished')")
        answers_within(page, GENEROUS)
        page.screenshot(path=str(tmp_path / "finished.png"), timeout=GENEROUS * 1000)

        # Redrawn in place: the message is the element the first check marked.
        marked = message.evaluate("item => item.streamedSince")
        assert marked == "the first check"
        # Bounded: a few thousand characters drawn of each copy of the 1 MiB.
        assert drawn_characters(page, "#conversation") < 10_000
        assert drawn_characters(page, "#output") < 10_000
        assert show_all.inner_text() == f"show all {len(TEXT):,} characters"
        output = page.locator("#output")
        assert output.inner_text().startswith("Output: " + HOSTILE[:10])
        # Text stays text: the markup is not parsed; the output, with its right-to-left
        # override, stays isolated in its `<bdi>`.
        markup = "#conversation b, #conversation img, #output b, #output img"
        assert page.locator(markup).count() == 0
        assert HOSTILE in message.locator(".content").inner_text()
        assert output.locator("bdi").first.inner_text().startswith(HOSTILE)

        with page.expect_download() as download:
            output.locator("button.download").click()
        assert Path(download.value.path()).read_text() == TEXT
        with page.expect_download() as download:
            message.locator("button.download").click()
        assert Path(download.value.path()).read_text() == TEXT
        show_all.click()  # asked for: the whole message, once
        assert drawn_characters(page, "#conversation") > len(TEXT)
        answers_within(page, GENEROUS)
