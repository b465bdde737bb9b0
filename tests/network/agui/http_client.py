"""An AG-UI client over httpx for the in-process server tests: posts a run and replays its
events strictly (`protocol.replay`), with a bearer token per principal."""

from __future__ import annotations

from typing import Any

import httpx

from tests.network.agui.protocol import parse_sse, replay


def bearer(request: Any, thread_id: str | None) -> str | None:
    token = request.headers.get("authorization", "").removeprefix("Bearer ")
    return {"token-alice": "alice", "token-bob": "bob"}.get(token)


class Client:
    def __init__(self, asgi: Any, token: str | None = None) -> None:
        self.asgi = asgi
        headers = {"authorization": f"Bearer {token}"} if token else {}
        self.http = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=asgi),
            base_url="http://t",
            headers=headers,
            timeout=30,
        )

    async def post(self, payload: dict[str, Any]) -> httpx.Response:
        return await self.http.post("/", json=payload)

    async def run(self, payload: dict[str, Any]) -> Any:
        response = await self.post(payload)
        assert response.status_code == 200, response.text
        return replay(
            parse_sse(response.text),
            state=payload.get("state") or {},
            thread_id=payload["threadId"],
            run_id=payload["runId"],
        )


def say(thread: str, run: str, text: str, **extra: Any) -> dict[str, Any]:
    return {
        "threadId": thread,
        "runId": run,
        "messages": [{"id": f"{run}-u", "role": "user", "content": text}],
        **extra,
    }
