"""Deterministic extraction of entities and facts from parsed episode lines.

What it finds, and nothing more: the project, files and symbols named in ``refs``, libraries
named in install commands or imports, commands quoted in backticks or run by git/env events,
the user (for preferences and requests) and error signatures. Facts come from decisions, rules,
preferences, errors and their fixes, tasks, edits, discoveries and environment changes; other
kinds only mention entities. Nothing is inferred beyond what the lines say.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from plait.adapters.backends.graphiti.episodes import EpisodeLine
from plait.state.ranking import STOPWORDS

FILE_SUFFIX = re.compile(r"\.(?P<ext>[A-Za-z0-9]{1,8})$")
FILE_EXTENSIONS = frozenset(
    {
        "py",
        "pyi",
        "ts",
        "tsx",
        "js",
        "jsx",
        "mjs",
        "cjs",
        "json",
        "toml",
        "yaml",
        "yml",
        "md",
        "rst",
        "txt",
        "cfg",
        "ini",
        "lock",
        "go",
        "rs",
        "java",
        "kt",
        "c",
        "h",
        "cc",
        "cpp",
        "hpp",
        "cs",
        "rb",
        "php",
        "swift",
        "sh",
        "bash",
        "zsh",
        "sql",
        "html",
        "css",
        "scss",
        "vue",
        "svelte",
        "ipynb",
        "env",
        "xml",
        "csv",
        "gradle",
        "mk",
        "dockerfile",
        "proto",
        "graphql",
    }
)
SYMBOL = re.compile(r"^[A-Za-z_][\w.:#]*(\(\))?$")
INSTALL = re.compile(
    r"\b(?P<tool>uv add|uv pip install|pip install|pip3 install|poetry add|npm install|npm i|"
    r"pnpm add|yarn add|bun add|cargo add|go get|gem install)\s+((?:--?[\w-]+\s+)*)"
    r"(?P<names>[A-Za-z0-9@/._\-\[\]<>=~^ ]+)"
)
IMPORT = re.compile(
    r"(?:^|`)\s*(?:from ([A-Za-z_][\w]*)[\w.]* import|import ([A-Za-z_][\w]*))", re.MULTILINE
)
BACKTICKS = re.compile(r"`([^`]{2,120})`")
VERSION = re.compile(r"[\[<>=~^@].*$")
COMMAND_KINDS = frozenset({"git", "env_change", "cwd_change"})
USER = "the user"
ERROR_NAME_MAX = 80

ENTITY_TYPES: dict[str, str] = {
    "Project": "The software project the agent works in.",
    "File": "A file or directory of the project, named by its path.",
    "Symbol": "A code symbol: a function, class, method or variable.",
    "Library": "A third-party package or library the project uses.",
    "Command": "A shell command that was run.",
    "Person": "A person: the user of the coding agent or someone named.",
    "Error": "An error signature seen while working.",
    "Topic": "The subject of a decision, rule or preference.",
}

RELATIONS: dict[str, tuple[str, str]] = {
    "decision": ("DECIDED", "Decided: {summary}"),
    "rule": ("FOLLOWS_RULE", "Rule: {summary}"),
    "preference": ("PREFERS", "The user prefers: {summary}"),
    "error": ("HIT_ERROR", "Error: {summary}"),
    "error_resolved": ("FIXED_BY", "Fix for {error}: {summary}"),
    "task_create": ("HAS_TASK", "Task: {summary}"),
    "task_update": ("HAS_TASK", "Task update: {summary}"),
    "task_complete": ("COMPLETED_TASK", "Completed task: {summary}"),
    "file_write": ("EDITED", "{summary}"),
    "file_edit": ("EDITED", "{summary}"),
    "discovery": ("LEARNED", "Learned: {summary}"),
    "env_change": ("USES", "Environment: {summary}"),
    "git": ("RAN", "Git: {summary}"),
}
TOPIC_KINDS = frozenset({"decision", "rule", "preference"})


@dataclass(frozen=True, kw_only=True, slots=True)
class Entity:
    """An entity named in the episode."""

    name: str
    type: str


@dataclass(frozen=True, kw_only=True, slots=True)
class Fact:
    """A fact between two entities, with the time it became true."""

    source: str
    target: str
    relation: str
    fact: str
    valid_at: str


def is_file(ref: str) -> bool:
    """A path: no spaces or parentheses, and a slash or a known file suffix."""
    if " " in ref or "(" in ref:
        return False
    match = FILE_SUFFIX.search(ref)
    return "/" in ref or (match is not None and match["ext"].lower() in FILE_EXTENSIONS)


def is_symbol(ref: str) -> bool:
    """A code identifier such as ``parse()``, ``Memory.open`` or ``mod::fn``."""
    return bool(SYMBOL.match(ref)) and not is_file(ref)


def library_names(text: str) -> list[str]:
    """Packages named in install commands and imports in ``text``.

    Prose is not a command: the names end at the first English function word ("pip install
    httpx and then …"), and ``go get`` names only module paths ("go get my hair done" names
    none).
    """
    names: list[str] = []
    for match in INSTALL.finditer(text):
        for word in match["names"].split():
            if word.casefold() in STOPWORDS:
                break
            name = VERSION.sub("", word.strip()) if not word.startswith("@") else word
            if match["tool"] == "go get" and "/" not in name:
                break
            if name and not name.startswith("-") and name not in {".", "-e"}:
                names.append(name)
    for match in IMPORT.finditer(text):
        names.append(match[1] or match[2])
    return names


def command_names(line: EpisodeLine) -> list[str]:
    """Commands in backticks, and the summary of git/env/cwd events that look like commands."""
    found = [cmd.strip() for cmd in BACKTICKS.findall(line.summary)]
    if line.kind in COMMAND_KINDS and line.summary and " " in line.summary:
        first = line.summary.split()[0]
        if first.isidentifier() or first in {"cd", "git", "uv", "npm", "pip"}:
            found.append(line.summary)
    return found


def error_name(line: EpisodeLine) -> str:
    """The error entity of an error or its fix: its signature (key), else its summary."""
    return f"error {line.key or line.summary}"[:ERROR_NAME_MAX].strip()


def topic_name(line: EpisodeLine) -> str:
    """The topic entity of a decision, rule or preference with a key."""
    return f"topic {line.key}"[:ERROR_NAME_MAX] if line.key else ""


def line_entities(line: EpisodeLine, project: str) -> list[Entity]:
    """Entities one line names, in order of appearance."""
    found: list[Entity] = []
    if line.kind in {"preference", "prompt"}:
        found.append(Entity(name=USER, type="Person"))
    for ref in line.refs:
        if is_file(ref):
            found.append(Entity(name=ref, type="File"))
        elif is_symbol(ref):
            found.append(Entity(name=ref, type="Symbol"))
    for name in library_names(f"{line.summary} {line.detail}"):
        found.append(Entity(name=name, type="Library"))
    for command in command_names(line):
        found.append(Entity(name=command, type="Command"))
    if line.kind in {"error", "error_resolved"}:
        found.append(Entity(name=error_name(line), type="Error"))
    if line.kind in TOPIC_KINDS and line.key:
        found.append(Entity(name=topic_name(line), type="Topic"))
    return found


def extract_entities(lines: list[EpisodeLine], project: str) -> list[Entity]:
    """The project (if named) and every entity of every line, once each, by name."""
    entities: dict[str, Entity] = {}
    if project:
        entities[project.casefold()] = Entity(name=project, type="Project")
    for line in lines:
        for entity in line_entities(line, project):
            entities.setdefault(entity.name.casefold(), entity)
    return list(entities.values())


def fact_target(line: EpisodeLine, entities: list[Entity], fallback: str) -> str:
    """What a fact is about: its topic, else its first file/symbol/library/command."""
    topic = topic_name(line) if line.kind in TOPIC_KINDS else ""
    if topic:
        return topic
    for entity in entities:
        if entity.type in {"File", "Symbol", "Library", "Command"}:
            return entity.name
    return fallback


def line_fact(line: EpisodeLine, project: str) -> Fact | None:
    """The fact one line states, or None for kinds that state none (or with no anchor)."""
    relation = RELATIONS.get(line.kind)
    if relation is None or not line.summary:
        return None
    name, template = relation
    entities = line_entities(line, project)
    anchor = project or (entities[0].name if entities else "")
    if not anchor:
        return None
    source = USER if line.kind == "preference" else anchor
    target = fact_target(line, entities, anchor)
    if line.kind in {"error", "error_resolved"}:
        source = anchor if line.kind == "error" else error_name(line)
        target = error_name(line) if line.kind == "error" else fact_target(line, entities, anchor)
        if target == source:
            target = anchor
    text = template.format(summary=line.summary, error=line.key or "an error")
    if line.kind in TOPIC_KINDS and line.key:
        text = f"{text} (topic: {line.key})"
    return Fact(source=source, target=target, relation=name, fact=text, valid_at=line.time)


def extract_facts(lines: list[EpisodeLine], project: str) -> list[Fact]:
    """Every fact the lines state, once each."""
    facts: dict[str, Fact] = {}
    for line in lines:
        fact = line_fact(line, project)
        if fact is not None:
            facts.setdefault(fact.fact.casefold(), fact)
    return list(facts.values())


TOPIC = re.compile(r"\(topic: (?P<key>[^)]*)\)\s*$")


def fact_topic(fact: str) -> str:
    """The ``(topic: …)`` a fact ends with, or ``""``."""
    match = TOPIC.search(fact.strip())
    return match["key"].strip() if match else ""


def normalize(text: str) -> str:
    """Case- and whitespace-insensitive form for exact comparisons."""
    return " ".join(text.casefold().split())


__all__ = [
    "ENTITY_TYPES",
    "USER",
    "Entity",
    "Fact",
    "extract_entities",
    "extract_facts",
    "fact_topic",
    "is_file",
    "is_symbol",
    "library_names",
    "normalize",
]
