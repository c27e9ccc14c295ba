"""A deterministic, offline stand-in for graphiti-core's LLM: no key, no network, no model.

graphiti-core asks its LLM for a pydantic ``response_model``; this client recognizes the
request by that model and answers from the plait episode lines in the prompt (see
:mod:`plait.adapters.backends.graphiti.episodes`):

- ``ExtractedEntities``: the project, files, symbols, libraries, commands, the user, errors
  and topics the lines name (:mod:`plait.adapters.backends.graphiti.extraction`).
- ``ExtractedEdges``: decisions, rules, preferences, errors and fixes, tasks, edits, ...
- ``NodeResolutions`` / ``NodeDuplicate``: duplicates only on an exact (case-insensitive) name.
- ``EdgeDuplicate``: duplicates only on an exact fact text; contradicted only when an older
  fact has the same ``(topic: …)`` and different text (plait's topic-keyed supersede).
- ``SummarizedEntities``: extractive summaries, the summaries of the lines naming the entity.

Anything else (timestamps, attributes, saga or community summaries, unknown prompts) gets an
empty, schema-valid answer: it says "nothing found" rather than inventing.
"""

from __future__ import annotations

import ast
import json
import re
import typing
from collections import Counter
from typing import Any

from graphiti_core.llm_client.client import LLMClient
from graphiti_core.llm_client.config import DEFAULT_MAX_TOKENS, LLMConfig, ModelSize
from graphiti_core.prompts.models import Message
from pydantic import BaseModel

from plait.adapters.backends.graphiti.episodes import EpisodeLine, parse_episode_body
from plait.adapters.backends.graphiti.extraction import (
    extract_entities,
    extract_facts,
    fact_topic,
    line_entities,
    normalize,
)

SUMMARY_MAX_CHARS = 250
OFFLINE_MODEL = "plait-offline"
INVISIBLE = "\u200b\u200c\u200d\ufeff\u2060"
DROPPED_CHARS = re.compile(f"[\x00-\x08\x0b\x0c\x0e-\x1f{INVISIBLE}]+")


def block(text: str, tag: str) -> str | None:
    """The text between ``<tag>`` and ``</tag>``, or None."""
    match = re.search(rf"<{re.escape(tag)}>\n?(.*?)\n?</{re.escape(tag)}>", text, re.DOTALL)
    return match[1] if match else None


def literal(text: str | None) -> Any:
    """A JSON or Python literal, or None when ``text`` is neither."""
    if text is None:
        return None
    for load in (json.loads, ast.literal_eval):
        try:
            return load(text.strip())
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
    return None


def prompt_text(messages: list[Message]) -> str:
    """Every message of the prompt, joined."""
    return "\n".join(message.content for message in messages)


CURRENT_EPISODE_TAGS = ("CURRENT MESSAGE", "CURRENT_MESSAGE", "CURRENT MESSAGES")


def current_episode(text: str) -> str:
    """The prompt's current-message block when it has one (previous ones are context only)."""
    for tag in CURRENT_EPISODE_TAGS:
        found = block(text, tag)
        if found is not None and parse_episode_body(found)[1]:
            return found
    return text


def episode_of(text: str) -> tuple[str, list[EpisodeLine]]:
    """The plait episode in a prompt: the current message's raw lines, else lines in JSON."""
    text = current_episode(text)
    project, lines = parse_episode_body(text)
    if lines:
        return project, lines
    for raw in text.splitlines():
        value = literal(raw) if raw.startswith('"') else None
        if isinstance(value, str):
            project, lines = parse_episode_body(value)
            if lines:
                return project, lines
    return "", []


def type_ids(text: str) -> dict[str, int]:
    """Entity type name -> id offered in the prompt's ``<ENTITY TYPES>``."""
    offered = literal(block(text, "ENTITY TYPES"))
    ids: dict[str, int] = {}
    if isinstance(offered, list):
        for item in offered:
            if isinstance(item, dict) and "entity_type_name" in item:
                ids[str(item["entity_type_name"])] = int(item.get("entity_type_id", 0))
    return ids


def answer_entities(text: str) -> dict[str, Any]:
    """``ExtractedEntities`` from the episode lines."""
    project, lines = episode_of(text)
    ids = type_ids(text)
    return {
        "extracted_entities": [
            {"name": e.name, "entity_type_id": ids.get(e.type, 0), "episode_indices": [0]}
            for e in extract_entities(lines, project)
        ]
    }


def answer_edges(text: str) -> dict[str, Any]:
    """``ExtractedEdges`` from the episode lines."""
    project, lines = episode_of(text)
    return {
        "edges": [
            {
                "source_entity_name": f.source,
                "target_entity_name": f.target,
                "relation_type": f.relation,
                "fact": f.fact,
                "valid_at": f.valid_at,
                "invalid_at": None,
                "episode_indices": [0],
            }
            for f in extract_facts(lines, project)
        ]
    }


def answer_node_resolutions(text: str) -> dict[str, Any]:
    """``NodeResolutions``: a duplicate only when an existing entity has the same name."""
    new = literal(block(text, "ENTITIES"))
    existing = literal(block(text, "EXISTING ENTITIES"))
    new = new if isinstance(new, list) else []
    existing = existing if isinstance(existing, list) else []
    by_name = {
        normalize(str(c.get("name", ""))): int(c.get("candidate_id", -1))
        for c in existing
        if isinstance(c, dict)
    }
    resolutions = []
    for index, entity in enumerate(new):
        if not isinstance(entity, dict):
            continue
        name = str(entity.get("name", ""))
        resolutions.append(
            {
                "id": int(entity.get("id", index)),
                "name": name,
                "duplicate_candidate_id": by_name.get(normalize(name), -1),
            }
        )
    return {"entity_resolutions": resolutions}


def answer_node_duplicate(text: str) -> dict[str, Any]:
    """``NodeDuplicate`` for a single new entity: never a duplicate unless named the same."""
    entity = literal(block(text, "NEW ENTITY"))
    existing = literal(block(text, "EXISTING ENTITIES"))
    name = str(entity.get("name", "")) if isinstance(entity, dict) else ""
    duplicate = -1
    if isinstance(existing, list):
        for index, candidate in enumerate(existing):
            if isinstance(candidate, dict) and normalize(str(candidate.get("name"))) == normalize(
                name
            ):
                duplicate = int(candidate.get("candidate_id", index))
                break
    return {"id": 0, "name": name, "duplicate_candidate_id": duplicate}


def facts_in(text: str | None) -> list[tuple[int, str]]:
    """``(idx, fact)`` pairs of a facts block."""
    value = literal(text)
    if not isinstance(value, list):
        return []
    return [
        (int(item["idx"]), str(item.get("fact", "")))
        for item in value
        if isinstance(item, dict) and "idx" in item
    ]


def answer_edge_duplicate(text: str) -> dict[str, Any]:
    """``EdgeDuplicate``: same text is a duplicate; same topic, other text, is contradicted."""
    new_fact = (block(text, "NEW FACT") or "").strip()
    existing = facts_in(block(text, "EXISTING FACTS"))
    candidates = facts_in(block(text, "FACT INVALIDATION CANDIDATES"))
    duplicates = [idx for idx, fact in existing if normalize(fact) == normalize(new_fact)]
    topic = fact_topic(new_fact)
    contradicted = [
        idx
        for idx, fact in [*existing, *candidates]
        if topic and fact_topic(fact) == topic and normalize(fact) != normalize(new_fact)
    ]
    return {"duplicate_facts": duplicates, "contradicted_facts": contradicted}


def answer_summaries(text: str) -> dict[str, Any]:
    """``SummarizedEntities``: each entity's summary is the lines that name it."""
    project, lines = episode_of(text)
    entities = literal(block(text, "ENTITIES"))
    named = [(line, {normalize(e.name) for e in line_entities(line, project)}) for line in lines]
    summaries = []
    for entity in entities if isinstance(entities, list) else []:
        name = normalize(str(entity.get("name", "")) if isinstance(entity, dict) else "")
        said = [line.summary for line, names in named if line.summary and name in names]
        if said:
            original = str(entity.get("name", ""))
            summaries.append({"name": original, "summary": "; ".join(said)[:SUMMARY_MAX_CHARS]})
    return {"summaries": summaries}


ANSWERS: dict[str, typing.Callable[[str], dict[str, Any]]] = {
    "ExtractedEntities": answer_entities,
    "ExtractedEdges": answer_edges,
    "NodeResolutions": answer_node_resolutions,
    "NodeDuplicate": answer_node_duplicate,
    "EdgeDuplicate": answer_edge_duplicate,
    "SummarizedEntities": answer_summaries,
}


def empty_value(annotation: Any) -> Any:
    """The empty value of a field type: None if optional, else "", [], {}, 0 or False."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if type(None) in args:
        return None
    if origin in (list, tuple, set, frozenset) or annotation in (list, tuple, set):
        return []
    if origin is dict or annotation is dict:
        return {}
    if annotation is bool:
        return False
    if annotation in (int, float):
        return 0
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return neutral_answer(annotation)
    return ""


def neutral_answer(model: type[BaseModel]) -> dict[str, Any]:
    """A schema-valid answer that claims nothing: defaults, else empty values."""
    answer: dict[str, Any] = {}
    for name, field in model.model_fields.items():
        if field.is_required():
            answer[name] = empty_value(field.annotation)
        elif field.default_factory is None:
            answer[name] = field.default
        else:
            answer[name] = field.default_factory()  # type: ignore[call-arg]
    return answer


def clean_input(text: str) -> str:
    """graphiti-core's prompt cleaning in one pass.

    Drops invalid UTF-8, zero-width and control characters (newlines, returns and tabs stay).
    """
    return DROPPED_CHARS.sub("", text.encode("utf-8", errors="ignore").decode("utf-8"))


class OfflineLLMClient(LLMClient):
    """graphiti-core's ``LLMClient``, answered deterministically from plait episodes."""

    def __init__(self, config: LLMConfig | None = None) -> None:
        """No key, no cache, no network."""
        super().__init__(config or LLMConfig(model=OFFLINE_MODEL, small_model=OFFLINE_MODEL))
        self.unknown_requests: Counter[str] = Counter()

    async def generate_response(
        self,
        messages: list[Message],
        response_model: type[BaseModel] | None = None,
        max_tokens: int | None = None,
        model_size: ModelSize = ModelSize.medium,
        group_id: str | None = None,
        prompt_name: str | None = None,
        *,
        attribute_extraction: bool = False,
        model: str | None = None,
    ) -> dict[str, Any]:
        """graphiti-core's entry point without what only a real model reads.

        No JSON schema, language or attribute notes are added to the prompt (the answer is
        chosen by ``response_model`` and read from the episode blocks), and there is no
        response cache or tracing span. The prompt is cleaned as graphiti-core cleans it and
        the answer goes through graphiti-core's retry, as with any client.
        """
        for message in messages:
            message.content = self._clean_input(message.content)
        return await self._generate_response_with_retry(
            messages, response_model, max_tokens or self.max_tokens, model_size, model=model
        )

    def _clean_input(self, input: str) -> str:
        """:func:`clean_input`: the same result as graphiti-core's, in one regex pass."""
        return clean_input(input)

    async def _generate_response(
        self,
        messages: list[Message],
        response_model: type[BaseModel] | None = None,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        model_size: ModelSize = ModelSize.medium,
        *,
        model: str | None = None,
    ) -> dict[str, Any]:
        """Answer by response model; unknown requests get a neutral answer and are counted."""
        if response_model is None:
            self.unknown_requests["<no response model>"] += 1
            return {}
        answer = ANSWERS.get(response_model.__name__)
        if answer is None:
            self.unknown_requests[response_model.__name__] += 1
            return neutral_answer(response_model)
        return answer(prompt_text(messages))

    def _get_provider_type(self) -> str:
        """Named for graphiti's tracing."""
        return "offline"


__all__ = ["OfflineLLMClient", "neutral_answer"]
