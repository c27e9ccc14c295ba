"""The local OpenAI-compatible mock provider now lives in :mod:`plait.devtools.mock_provider`.

It moved so ``plait bench startup --opencode`` can time real OpenCode against it; tests keep
importing it from here.
"""

from plait.devtools.mock_provider import (
    MockProvider,
    RecordedRequest,
    Reply,
    Responder,
    completion_body,
    completion_chunks,
    is_title_request,
    message_text,
)

__all__ = [
    "MockProvider",
    "RecordedRequest",
    "Reply",
    "Responder",
    "completion_body",
    "completion_chunks",
    "is_title_request",
    "message_text",
]
