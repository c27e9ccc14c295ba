"""A local OpenAI-compatible chat-completions provider that records every request it receives.

OpenCode talks to it through ``@ai-sdk/openai-compatible``. Replies stream as server-sent events.
The reported prompt-token usage is configurable so a test can push OpenCode over a model's context
limit and force a compaction.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["MockProvider", "RecordedRequest", "Reply", "Responder", "is_title_request"]

TITLE_MARKER = "title generator"


@dataclass(frozen=True, kw_only=True)
class Reply:
    """One scripted answer: text, or a tool call; and the prompt tokens to report."""

    text: str = "OK."
    tool: str | None = None
    arguments: dict[str, Any] = field(default_factory=dict)
    prompt_tokens: int | None = None


def is_title_request(body: dict[str, Any]) -> bool:
    """Whether OpenCode asks for a session title (a side request, not the agent loop)."""
    for message in body.get("messages") or []:
        if message.get("role") == "system" and TITLE_MARKER in message_text(message):
            return True
    return False


@dataclass
class RecordedRequest:
    """One chat-completions request body as the provider received it."""

    path: str
    body: dict[str, Any]

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The ``messages`` list of the request."""
        return list(self.body.get("messages") or [])

    @property
    def tool_names(self) -> list[str]:
        """Names of the tools offered to the model."""
        tools = self.body.get("tools") or []
        return [tool.get("function", {}).get("name", "") for tool in tools]

    @property
    def is_title(self) -> bool:
        """Whether this is OpenCode's title-generation side request."""
        return is_title_request(self.body)

    def text(self) -> str:
        """Every message's text joined, for substring assertions."""
        return "\n".join(message_text(message) for message in self.messages)

    def last_user_text(self) -> str:
        """The text of the last ``user`` message."""
        users = [message for message in self.messages if message.get("role") == "user"]
        return message_text(users[-1]) if users else ""


def message_text(message: dict[str, Any]) -> str:
    """The text of one OpenAI chat message (string or content-part list)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


Responder = Callable[[str, dict[str, Any]], dict[str, Any] | None]


@dataclass
class MockProvider:
    """A threaded HTTP server on 127.0.0.1 speaking the OpenAI chat-completions protocol.

    ``responder(path, body)`` answers a non-streamed request with its own JSON when it
    returns one (structured outputs, embeddings); otherwise the scripted reply is sent.
    """

    reply: str = "OK."
    prompt_tokens: int = 100
    responder: Responder | None = None
    script: list[Reply] = field(default_factory=list)
    requests: list[RecordedRequest] = field(default_factory=list)
    _server: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``."""
        assert self._server is not None, "provider not started"
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def start(self) -> MockProvider:
        """Bind a free port and serve in a daemon thread."""
        handler = _handler_for(self)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Shut the server down."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def record(self, path: str, body: dict[str, Any]) -> None:
        """Keep one request (thread-safe)."""
        with self._lock:
            self.requests.append(RecordedRequest(path=path, body=body))

    def next_reply(self, body: dict[str, Any]) -> Reply:
        """The scripted reply for an agent request (titles always get the default)."""
        with self._lock:
            if self.script and not is_title_request(body):
                return self.script.pop(0)
        return Reply(text=self.reply, prompt_tokens=self.prompt_tokens)

    def chat_requests(self) -> list[RecordedRequest]:
        """Requests to ``/chat/completions`` in arrival order, title requests left out."""
        with self._lock:
            return [
                request
                for request in self.requests
                if "chat/completions" in request.path and not request.is_title
            ]

    def clear(self) -> None:
        """Forget recorded requests."""
        with self._lock:
            self.requests.clear()


def completion_chunks(model: str, reply: Reply, prompt_tokens: int) -> Iterator[dict[str, Any]]:
    """The streamed chunks of one assistant reply (text or one tool call), usage last."""
    base = {"id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": int(time.time())}
    base["model"] = model
    if reply.tool:
        call = {
            "index": 0,
            "id": f"call_{uuid.uuid4().hex[:12]}",
            "type": "function",
            "function": {"name": reply.tool, "arguments": json.dumps(reply.arguments)},
        }
        delta: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [call]}
        reason = "tool_calls"
    else:
        delta = {"role": "assistant", "content": reply.text}
        reason = "stop"
    yield {**base, "choices": [{"index": 0, "delta": delta}]}
    usage = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": 5,
        "total_tokens": prompt_tokens + 5,
    }
    finish = [{"index": 0, "delta": {}, "finish_reason": reason}]
    yield {**base, "choices": finish, "usage": usage}


def completion_body(model: str, text: str, prompt_tokens: int) -> dict[str, Any]:
    """A non-streamed chat completion."""
    return {
        "id": "chatcmpl-mock",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": 5,
            "total_tokens": prompt_tokens + 5,
        },
    }


def _handler_for(provider: MockProvider) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return None

        def do_GET(self) -> None:
            payload = json.dumps({"object": "list", "data": [{"id": "mock-model"}]}).encode()
            self._send(200, "application/json", payload)

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b"{}"
            try:
                body = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                body = {"_raw": raw.decode("utf-8", "replace")}
            provider.record(self.path, body)
            answer = (
                None
                if body.get("stream") or provider.responder is None
                else (provider.responder(self.path, body))
            )
            if answer is not None:
                self._send(200, "application/json", json.dumps(answer).encode())
                return
            model = str(body.get("model", "mock-model"))
            reply = provider.next_reply(body)
            tokens = provider.prompt_tokens if reply.prompt_tokens is None else reply.prompt_tokens
            if body.get("stream"):
                self._stream(model, reply, tokens)
            else:
                data = completion_body(model, reply.text, tokens)
                self._send(200, "application/json", json.dumps(data).encode())

        def _stream(self, model: str, reply: Reply, tokens: int) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.send_header("connection", "close")
            self.end_headers()
            for chunk in completion_chunks(model, reply, tokens):
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
            self.close_connection = True

        def _send(self, status: int, content_type: str, payload: bytes) -> None:
            self.send_response(status)
            self.send_header("content-type", content_type)
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    return Handler
