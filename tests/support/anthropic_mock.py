"""A local stand-in for Anthropic's Messages API (``POST /v1/messages``, SSE): records, answers.

Every request body is kept (``requests``); each answer is one text block, ``reply(body)``'s
text, streamed as the API streams it when the request asks for a stream.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def sse(event: str, data: dict[str, Any]) -> bytes:
    """One server-sent event."""
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def message(text: str, model: str) -> dict[str, Any]:
    """A finished assistant message with one text block."""
    return {
        "id": "msg_plait_mock",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }


def stream(text: str, model: str) -> bytes:
    """The events of a streamed answer."""
    start = message("", model) | {"content": [], "stop_reason": None}
    delta = {"type": "text_delta", "text": text}
    return b"".join(
        [
            sse("message_start", {"type": "message_start", "message": start}),
            sse(
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "text", "text": ""},
                },
            ),
            sse("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
            sse(
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                    "usage": {"output_tokens": 5},
                },
            ),
            sse("message_stop", {"type": "message_stop"}),
        ]
    )


class AnthropicMock:
    """The mock on 127.0.0.1 (a free port) in a thread; ``url`` is its base URL."""

    def __init__(self, reply: Callable[[dict[str, Any]], str]) -> None:
        self.reply = reply
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self.handler())
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def handler(self) -> type[BaseHTTPRequestHandler]:
        mock = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if "count_tokens" in self.path:
                    return self.answer(b'{"input_tokens": 10}', "application/json")
                with mock.lock:
                    mock.requests.append(body)
                text, model = mock.reply(body), str(body.get("model", "claude"))
                if body.get("stream"):
                    return self.answer(stream(text, model), "text/event-stream")
                return self.answer(json.dumps(message(text, model)).encode(), "application/json")

            def do_GET(self) -> None:
                self.answer(b"{}", "application/json")

            def answer(self, payload: bytes, kind: str) -> None:
                self.send_response(200)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        return Handler

    def __enter__(self) -> AnthropicMock:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def seen(self) -> list[dict[str, Any]]:
        """The requests so far."""
        with self.lock:
            return list(self.requests)


__all__ = ["AnthropicMock"]
