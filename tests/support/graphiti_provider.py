"""An OpenAI-compatible server's answers to graphiti-core, computed by plait's offline extractor.

:func:`offline_responder` plugs into :class:`~tests.support.opencode_mock_provider.MockProvider`:
a structured-output chat completion is answered by the offline extractor for the schema the
request names (``response_format.json_schema.name``), and ``/embeddings`` by the offline
embedder, so graphiti-core's OpenAI-compatible clients get real, checkable answers over HTTP.
"""

from __future__ import annotations

import base64
import json
from array import array
from collections import Counter
from typing import Any

from plait.adapters.backends.graphiti.offline_embedder import embed_text
from plait.adapters.backends.graphiti.offline_llm import ANSWERS
from support.opencode_mock_provider import completion_body, message_text

unanswered: Counter[str] = Counter()


def embeddings_body(body: dict[str, Any]) -> dict[str, Any]:
    """An ``/embeddings`` response: one offline vector per input, as floats or base64."""
    texts = body.get("input")
    texts = [texts] if isinstance(texts, str) else list(texts or [])
    dimensions = int(body.get("dimensions") or 256)
    data = []
    for index, text in enumerate(texts):
        vector: Any = embed_text(str(text), dimensions)
        if body.get("encoding_format") == "base64":
            vector = base64.b64encode(array("f", vector).tobytes()).decode("ascii")
        data.append({"object": "embedding", "index": index, "embedding": vector})
    usage = {"prompt_tokens": len(texts), "total_tokens": len(texts)}
    return {"object": "list", "data": data, "model": body.get("model", ""), "usage": usage}


def offline_responder(path: str, body: dict[str, Any]) -> dict[str, Any] | None:
    """The JSON answer to a graphiti-core request, or None to fall back to the scripted reply."""
    if path.endswith("/embeddings"):
        return embeddings_body(body)
    schema = (body.get("response_format") or {}).get("json_schema") or {}
    name = str(schema.get("name", ""))
    answer = ANSWERS.get(name)
    if answer is None:
        unanswered[name] += 1
        return None
    prompt = "\n".join(message_text(message) for message in body.get("messages") or [])
    return completion_body(str(body.get("model", "")), json.dumps(answer(prompt)), 100)


__all__ = ["embeddings_body", "offline_responder", "unanswered"]
