"""Session summaries written by the configured LLM (``observations.llm_summary``).

Off the hot path: plait's background writes summaries on idle and before compaction, offline
by default (:mod:`plait.nodes.session_summary`); with this on and ``llm.provider`` not offline,
the LLM rewrites that draft from the session's events, through graphiti-core's ``LLMClient``
(the same client, provider and key the knowledge graph uses). A failure keeps the offline draft.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from plait.state.base.redact import redact

SYSTEM = (
    "You summarize one coding-agent session for the agent's next session. Answer only with the "
    "requested fields. Each field is a list of short, self-contained items (one line each). "
    "Keep names of files, commands and libraries exact. Leave a field empty rather than guess."
)
EVENTS_MAX_CHARS = 24_000


class SessionSummaryFields(BaseModel):
    """The sections of a session summary."""

    goal: list[str] = Field(default_factory=list, description="What the user wanted.")
    instructions: list[str] = Field(default_factory=list, description="Rules and preferences.")
    discoveries: list[str] = Field(default_factory=list, description="What was found out.")
    accomplished: list[str] = Field(default_factory=list, description="What got done.")
    next_steps: list[str] = Field(default_factory=list, description="What is left to do.")
    relevant_files: list[str] = Field(default_factory=list, description="Files that matter.")


def sections_of(fields: SessionSummaryFields) -> dict[str, list[str]]:
    """The fields by the summary's section names, each item redacted."""
    named = {
        "Goal": fields.goal,
        "Instructions": fields.instructions,
        "Discoveries": fields.discoveries,
        "Accomplished": fields.accomplished,
        "Next Steps": fields.next_steps,
        "Relevant Files": fields.relevant_files,
    }
    return {name: [redact(item) for item in items] for name, items in named.items()}


class LLMSummaryWriter:
    """:class:`~plait.state.observations.SummaryWriter` over graphiti-core's ``LLMClient``."""

    def __init__(self, client: Any) -> None:
        """Use ``client`` (an ``LLMClient``: OpenAI, Anthropic, an OpenAI-compatible server)."""
        self.client = client

    async def write_summary(self, draft: str, events: str) -> dict[str, list[str]]:
        """Ask the LLM for the sections; redacted before it leaves the process and after."""
        from graphiti_core.prompts.models import Message

        user = (
            f"Session events, oldest first:\n{redact(events[-EVENTS_MAX_CHARS:])}\n\n"
            f"A draft summary made without an LLM:\n{redact(draft)}"
        )
        messages = [Message(role="system", content=SYSTEM), Message(role="user", content=user)]
        answer = await self.client.generate_response(
            messages, response_model=SessionSummaryFields, prompt_name="plait.session_summary"
        )
        return sections_of(SessionSummaryFields.model_validate(answer))


def llm_summary_writer(settings: Any) -> LLMSummaryWriter:
    """The writer over the LLM the settings configure (``llm.*``)."""
    from plait.adapters.backends.graphiti.factory import make_llm_client
    from plait.adapters.backends.graphiti.knowledge import provider_config

    return LLMSummaryWriter(make_llm_client(provider_config(settings.llm)))


__all__ = ["LLMSummaryWriter", "SessionSummaryFields", "llm_summary_writer"]
