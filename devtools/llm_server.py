"""A local OpenAI-compatible server that answers graphiti-core's prompts validly, and counts.

For ``plait bench cost``: plait is configured with ``llm.base_url`` (and ``embedder.base_url``)
pointing here, so graphiti-core talks to it through its real OpenAI-compatible clients, over
HTTP, as it would to Ollama or vLLM. A structured chat completion is answered by plait's offline
extractor for the schema the request names (``response_format.json_schema.name``), any other
schema with its empty value; ``/embeddings`` by the offline embedder. Every request is counted
with its tokens (estimated at four characters a token), which is what a real provider bills.
Binds 127.0.0.1 only.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from plait.adapters.backends.graphiti.offline_embedder import embed_text
from plait.adapters.backends.graphiti.offline_llm import ANSWERS

CHARS_PER_TOKEN = 4


def tokens_of(text: str) -> int:
    """An estimate of a text's tokens (four characters a token, at least one)."""
    return max(1, len(text) // CHARS_PER_TOKEN)


def message_text(message: dict[str, Any]) -> str:
    """The text of one chat message (a string or a list of content parts)."""
    content = message.get("content")
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return content if isinstance(content, str) else ""


def empty_of(schema: dict[str, Any], definitions: dict[str, Any]) -> Any:
    """The empty value a JSON schema accepts: "", 0, False, [], or an object of empty fields."""
    if "$ref" in schema:
        return empty_of(definitions.get(schema["$ref"].rsplit("/", 1)[-1], {}), definitions)
    options = schema.get("anyOf") or []
    if any(option.get("type") == "null" for option in options):
        return None
    if options:
        return empty_of(options[0], definitions)
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        properties = schema.get("properties", {})
        required = schema.get("required", [])
        return {name: empty_of(properties[name], definitions) for name in required}
    empty = {"array": [], "string": "", "integer": 0, "number": 0, "boolean": False}
    return empty.get(str(kind))


@dataclass
class Usage:
    """What the server was asked: chat calls and their tokens, embedding calls and texts."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    embedding_calls: int = 0
    embedded_texts: int = 0
    by_schema: dict[str, int] = field(default_factory=dict)

    @property
    def tokens(self) -> int:
        """Prompt and completion tokens together."""
        return self.prompt_tokens + self.completion_tokens


def chat_answer(body: dict[str, Any]) -> tuple[str, str]:
    """(schema name, JSON answer) of a chat completion request."""
    schema = (body.get("response_format") or {}).get("json_schema") or {}
    name = str(schema.get("name", ""))
    prompt = "\n".join(message_text(m) for m in body.get("messages") or [])
    answer = ANSWERS.get(name)
    if answer is not None:
        return name, json.dumps(answer(prompt))
    definition = schema.get("schema") or {}
    return name, json.dumps(empty_of(definition, definition.get("$defs", {})) or {})


def completion(body: dict[str, Any], text: str, prompt_tokens: int, out_tokens: int) -> dict:
    """A non-streamed chat completion with its usage."""
    return {
        "id": "chatcmpl-plait-bench",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", ""),
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": out_tokens,
            "total_tokens": prompt_tokens + out_tokens,
        },
    }


def embeddings(body: dict[str, Any]) -> dict[str, Any]:
    """An ``/embeddings`` answer: one offline vector per input."""
    texts = body.get("input")
    texts = [texts] if isinstance(texts, str) else list(texts or [])
    dimensions = int(body.get("dimensions") or 256)
    data = [
        {"object": "embedding", "index": i, "embedding": embed_text(str(t), dimensions)}
        for i, t in enumerate(texts)
    ]
    used = sum(tokens_of(str(t)) for t in texts)
    usage = {"prompt_tokens": used, "total_tokens": used}
    return {"object": "list", "data": data, "model": body.get("model", ""), "usage": usage}


class CountingLLMServer:
    """The server on 127.0.0.1 and an ephemeral port, in a thread; :attr:`usage` counts."""

    def __init__(self) -> None:
        """Not started until :meth:`start`."""
        self.usage = Usage()
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1``."""
        assert self._server is not None, "start the server first"
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def answer(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """The JSON answer to one request, counted."""
        if path.endswith("/embeddings"):
            reply = embeddings(body)
            with self._lock:
                self.usage.embedding_calls += 1
                self.usage.embedded_texts += len(reply["data"])
            return reply
        name, text = chat_answer(body)
        prompt = "\n".join(message_text(m) for m in body.get("messages") or [])
        prompt_tokens, out_tokens = tokens_of(prompt), tokens_of(text)
        with self._lock:
            self.usage.calls += 1
            self.usage.prompt_tokens += prompt_tokens
            self.usage.completion_tokens += out_tokens
            self.usage.by_schema[name] = self.usage.by_schema.get(name, 0) + 1
        return completion(body, text, prompt_tokens, out_tokens)

    def reset(self) -> Usage:
        """The usage so far; counting starts again from zero."""
        with self._lock:
            used, self.usage = self.usage, Usage()
        return used

    def start(self) -> CountingLLMServer:
        """Listen on 127.0.0.1 in a daemon thread."""
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                data = json.dumps(owner.answer(self.path, body)).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet."""

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        """Stop listening."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None


__all__ = ["CountingLLMServer", "Usage", "chat_answer", "empty_of", "tokens_of"]
