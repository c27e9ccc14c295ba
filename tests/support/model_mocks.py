"""Local stand-ins for the coding hosts' model APIs: each records every request and answers.

One server (:class:`ModelMock`) on 127.0.0.1 and a free port, in a thread; a dialect per API
writes the answer, ``reply(body)``'s text, the way that API streams it:

- :class:`AnthropicMock`: Anthropic Messages (``POST /v1/messages``, SSE), Claude Code;
- :class:`ResponsesMock`: OpenAI Responses (``POST /v1/responses``, SSE), Codex;
- :class:`GeminiMock`: Gemini ``:generateContent`` and ``:streamGenerateContent?alt=sse``,
  Gemini CLI (its model router asks ``generateContent`` for a JSON choice first).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

# The model's answer to a request: its text, or (Responses only) one output item as the API
# sends it, such as a ``function_call``.
Reply = Callable[[dict[str, Any]], Any]


def sse(data: dict[str, Any], event: str | None = None) -> bytes:
    """One server-sent event (named when ``event`` is given)."""
    named = f"event: {event}\n" if event else ""
    return f"{named}data: {json.dumps(data)}\n\n".encode()


class ModelMock:
    """The server; a dialect overrides :meth:`respond` (``(body bytes, content type)``)."""

    def __init__(self, reply: Reply) -> None:
        self.reply = reply
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self.handler())
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def respond(self, path: str, body: dict[str, Any]) -> tuple[bytes, str] | None:
        """The answer to a recorded request; ``None`` for a request that is not a model call."""
        raise NotImplementedError

    def record(self, path: str, body: dict[str, Any]) -> None:
        with self.lock:
            self.requests.append(body)
            self.paths.append(path)

    def handler(self) -> type[BaseHTTPRequestHandler]:
        mock = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) or b"{}"
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = {}
                answered = mock.respond(self.path, body)
                self.answer(*(answered or (b"{}", "application/json")))

            def do_GET(self) -> None:
                self.answer(b"{}", "application/json")

            def answer(self, payload: bytes, kind: str) -> None:
                self.send_response(200)
                self.send_header("content-type", kind)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        return Handler

    def __enter__(self) -> ModelMock:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def seen(self) -> list[dict[str, Any]]:
        """The model requests so far."""
        with self.lock:
            return list(self.requests)


# -- Anthropic Messages -----------------------------------------------------------------------
def anthropic_message(text: str, model: str) -> dict[str, Any]:
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


def anthropic_stream(text: str, model: str) -> bytes:
    """The events of a streamed answer."""
    start = anthropic_message("", model) | {"content": [], "stop_reason": None}
    block = {"type": "text", "text": ""}
    delta = {"type": "text_delta", "text": text}
    done = {"stop_reason": "end_turn", "stop_sequence": None}
    events = [
        ("message_start", {"message": start}),
        ("content_block_start", {"index": 0, "content_block": block}),
        ("content_block_delta", {"index": 0, "delta": delta}),
        ("content_block_stop", {"index": 0}),
        ("message_delta", {"delta": done, "usage": {"output_tokens": 5}}),
        ("message_stop", {}),
    ]
    return b"".join(sse({"type": name, **data}, name) for name, data in events)


class AnthropicMock(ModelMock):
    """Anthropic's Messages API, as Claude Code calls it."""

    def respond(self, path: str, body: dict[str, Any]) -> tuple[bytes, str] | None:
        if "count_tokens" in path:
            return b'{"input_tokens": 10}', "application/json"
        self.record(path, body)
        text, model = self.reply(body), str(body.get("model", "claude"))
        if body.get("stream"):
            return anthropic_stream(text, model), "text/event-stream"
        return json.dumps(anthropic_message(text, model)).encode(), "application/json"


# -- OpenAI Responses -------------------------------------------------------------------------
def responses_stream(answer: Any, number: int) -> bytes:
    """A streamed Responses answer: an assistant message with the text, or the item given."""
    response_id = f"resp_plait_{number}"
    item = (
        answer
        if isinstance(answer, dict)
        else {
            "type": "message",
            "role": "assistant",
            "id": f"msg_plait_{number}",
            "content": [{"type": "output_text", "text": str(answer), "annotations": []}],
        }
    )
    usage = {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 5,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 15,
    }
    events = [
        ("response.created", {"response": {"id": response_id}}),
        ("response.output_item.done", {"output_index": 0, "item": item}),
        ("response.completed", {"response": {"id": response_id, "usage": usage}}),
    ]
    return b"".join(sse({"type": name, **data}, name) for name, data in events)


class ResponsesMock(ModelMock):
    """OpenAI's Responses API, as Codex calls it (a custom provider's ``base_url``)."""

    def respond(self, path: str, body: dict[str, Any]) -> tuple[bytes, str] | None:
        if not path.rstrip("/").split("?")[0].endswith("/responses"):
            return None
        self.record(path, body)
        return responses_stream(self.reply(body), len(self.requests)), "text/event-stream"


# -- Gemini -----------------------------------------------------------------------------------
def gemini_answer(answer: str | dict[str, Any]) -> dict[str, Any]:
    """One Gemini candidate: ``answer`` as text, or a part as it is (``{"functionCall": …}``)."""
    part = {"text": answer} if isinstance(answer, str) else answer
    return {
        "candidates": [
            {
                "content": {"role": "model", "parts": [part]},
                "finishReason": "STOP",
                "index": 0,
            }
        ],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
        "modelVersion": "gemini-mock",
    }


ROUTER_CHOICE = json.dumps({"reasoning": "a simple task", "model_choice": "flash"})


class GeminiMock(ModelMock):
    """Gemini's API as Gemini CLI calls it: the router's JSON choice, then streamed answers."""

    def respond(self, path: str, body: dict[str, Any]) -> tuple[bytes, str] | None:
        if ":streamGenerateContent" in path:
            self.record(path, body)
            return sse(gemini_answer(self.reply(body))), "text/event-stream"
        if ":generateContent" in path:
            config = body.get("generationConfig") or body.get("config") or {}
            if "responseJsonSchema" in config or "responseSchema" in config:
                return json.dumps(gemini_answer(ROUTER_CHOICE)).encode(), "application/json"
            self.record(path, body)
            return json.dumps(gemini_answer(self.reply(body))).encode(), "application/json"
        if ":countTokens" in path:
            return b'{"totalTokens": 10}', "application/json"
        return None


__all__ = ["AnthropicMock", "GeminiMock", "ModelMock", "Reply", "ResponsesMock", "sse"]
