"""First observations of a project, read offline from its own files.

With no memory yet, plait seeds a project brief (README), its tech stack (pyproject.toml,
package.json), how to build and test it (Makefile targets, package scripts, CI steps) and the
services it runs (compose files). Pure: the caller reads the files (:data:`SEED_FILES`) and hands
their text in; nothing here touches the disk or the network.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

README_NAMES = ("README.md", "README.rst", "README.txt", "README")
MAKEFILE_NAMES = ("Makefile", "makefile", "GNUmakefile")
COMPOSE_NAMES = ("compose.yaml", "compose.yml", "docker-compose.yml", "docker-compose.yaml")
CI_FILES = (".gitlab-ci.yml", ".circleci/config.yml")
WORKFLOW_DIR = ".github/workflows"
SEED_FILES = (*README_NAMES, "pyproject.toml", "package.json", *MAKEFILE_NAMES, *COMPOSE_NAMES)
FILE_MAX_BYTES = 65_536
BRIEF_MAX_CHARS = 700
NAMES_MAX = 15
COMMANDS_MAX = 12
KEY_TARGETS = ("install", "setup", "build", "test", "check", "lint", "fmt", "format", "run", "dev")
KEY_SCRIPTS = ("build", "test", "lint", "check", "dev", "start", "typecheck", "format")
TARGET = re.compile(r"^(?P<name>[A-Za-z0-9][\w.-]*)\s*:(?![=:])", re.MULTILINE)
RUN = re.compile(r"^(?P<indent>\s*)(?:-\s*)?run:\s*(?P<value>.*)$")
HEADING = re.compile(r"^#\s+(?P<title>.+?)\s*#*$")
REQUIREMENT_NAME = re.compile(r"^\s*(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)")


@dataclass(frozen=True, kw_only=True, slots=True)
class SeedDraft:
    """One observation to seed."""

    title: str
    content: str
    type: str
    topic_key: str
    files: tuple[str, ...]


# -- reading each kind of file --------------------------------------------------------------------
def readme_brief(text: str) -> tuple[str, str]:
    """The README's title and first paragraph of prose (badges, HTML and images skipped)."""
    title = ""
    paragraph: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        heading = HEADING.match(stripped)
        if heading and not title and not paragraph:
            title = heading["title"].strip()
            continue
        if not stripped:
            if paragraph:
                break
            continue
        if stripped.startswith(("#", "[![", "![", "<", ">", "```", "---", "===", "|")):
            if paragraph:
                break
            continue
        paragraph.append(stripped)
    brief = " ".join(" ".join(paragraph).split())
    if len(brief) > BRIEF_MAX_CHARS:
        brief = brief[: BRIEF_MAX_CHARS - 1] + "…"
    return title, brief


def requirement_names(requirements: Any) -> list[str]:
    """Package names of PEP 508 requirement strings."""
    if not isinstance(requirements, list):
        return []
    names = []
    for requirement in requirements:
        match = REQUIREMENT_NAME.match(str(requirement))
        if match:
            names.append(match["name"])
    return names


def pyproject_facts(text: str) -> dict[str, Any]:
    """Name, description, Python version, dependencies and tools of a ``pyproject.toml``."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return {}
    project = data.get("project", {}) if isinstance(data.get("project"), dict) else {}
    groups = data.get("dependency-groups", {})
    if not isinstance(groups, dict):
        groups = {}
    dev = [name for group in groups.values() for name in requirement_names(group)]
    tools = sorted(data.get("tool", {})) if isinstance(data.get("tool"), dict) else []
    backend = str(data.get("build-system", {}).get("build-backend", "")).split(".")[0]
    return {
        "name": str(project.get("name", "")),
        "description": str(project.get("description", "")),
        "python": str(project.get("requires-python", "")),
        "dependencies": requirement_names(project.get("dependencies")),
        "dev": dev,
        "tools": [t for t in tools if t not in ("setuptools",)],
        "backend": backend,
    }


def package_facts(text: str) -> dict[str, Any]:
    """Name, description, dependencies and scripts of a ``package.json``."""
    try:
        data = json.loads(text)
    except ValueError:
        return {}
    if not isinstance(data, dict):
        return {}
    scripts = data.get("scripts") if isinstance(data.get("scripts"), dict) else {}
    return {
        "name": str(data.get("name", "")),
        "description": str(data.get("description", "")),
        "dependencies": sorted(data.get("dependencies") or {}),
        "dev": sorted(data.get("devDependencies") or {}),
        "scripts": {str(k): str(v) for k, v in (scripts or {}).items()},
    }


def make_targets(text: str) -> dict[str, str]:
    """Makefile targets and the first line of each one's recipe."""
    targets: dict[str, str] = {}
    lines = text.splitlines()
    for number, line in enumerate(lines):
        match = TARGET.match(line)
        if not match or match["name"].startswith("."):
            continue
        recipe = next(
            (nxt.strip() for nxt in lines[number + 1 : number + 4] if nxt.startswith("\t")), ""
        )
        targets.setdefault(match["name"], recipe.lstrip("@"))
    return targets


def ci_commands(text: str) -> list[str]:
    """The commands a CI file runs: ``run:`` steps (first line of a block) and ``script:`` items."""
    commands: list[str] = []
    lines = text.splitlines()
    for number, line in enumerate(lines):
        match = RUN.match(line)
        if match:
            value = match["value"].strip()
            if value in ("|", ">", "|-", ">-"):
                value = next((n.strip() for n in lines[number + 1 :] if n.strip()), "")
            commands.append(value.strip("'\""))
    commands += script_items(lines)
    return [c for c in dict.fromkeys(commands) if c][:COMMANDS_MAX]


def script_items(lines: list[str]) -> list[str]:
    """``- command`` items under ``script:`` keys (GitLab CI)."""
    items: list[str] = []
    inside = -1
    for line in lines:
        indent = len(line) - len(line.lstrip())
        stripped = line.strip()
        if stripped.startswith("script:"):
            inside = indent
            continue
        if inside >= 0 and stripped.startswith("- ") and indent > inside:
            items.append(stripped[2:].strip().strip("'\""))
        elif inside >= 0 and stripped and indent <= inside:
            inside = -1
    return items


def compose_services(text: str) -> list[str]:
    """``name (image)`` of each service of a compose file."""
    services: list[str] = []
    inside = False
    current = ""
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        indent = len(line) - len(line.lstrip())
        if indent == 0:
            inside = line.strip() == "services:"
            continue
        if not inside:
            continue
        if indent == 2 and line.strip().endswith(":"):
            current = line.strip()[:-1]
            services.append(current)
        elif current and line.strip().startswith("image:"):
            image = line.split(":", 1)[1].strip().strip("'\"")
            services[-1] = f"{current} ({image})"
    return services[:NAMES_MAX]


# -- the seeds ------------------------------------------------------------------------------------
def first_of(files: Mapping[str, str], names: tuple[str, ...]) -> tuple[str, str] | None:
    """The first of ``names`` present: its name and text."""
    return next(((name, files[name]) for name in names if name in files), None)


def project_name(files: Mapping[str, str], fallback: str) -> str:
    """The project's name: pyproject, package.json, the README's title, else ``fallback``."""
    for name in (
        pyproject_facts(files.get("pyproject.toml", "")).get("name"),
        package_facts(files.get("package.json", "")).get("name"),
    ):
        if name:
            return str(name)
    readme = first_of(files, README_NAMES)
    title = readme_brief(readme[1])[0] if readme else ""
    return title or fallback


def brief_seed(files: Mapping[str, str], name: str) -> SeedDraft | None:
    """The project brief: the README's first paragraph, else a manifest's description."""
    readme = first_of(files, README_NAMES)
    text = readme_brief(readme[1])[1] if readme else ""
    where = readme[0] if readme and text else ""
    if not text:
        for manifest, facts in manifests(files):
            if facts.get("description"):
                text, where = str(facts["description"]), manifest
                break
    if not text:
        return None
    return SeedDraft(
        title=f"Project brief: {name}",
        content=f"What: {text}\nWhere: {where}",
        type="architecture",
        topic_key="project/brief",
        files=(where,),
    )


def manifests(files: Mapping[str, str]) -> list[tuple[str, dict[str, Any]]]:
    """The facts of each manifest present."""
    found: list[tuple[str, dict[str, Any]]] = []
    if "pyproject.toml" in files:
        found.append(("pyproject.toml", pyproject_facts(files["pyproject.toml"])))
    if "package.json" in files:
        found.append(("package.json", package_facts(files["package.json"])))
    return [(name, facts) for name, facts in found if facts]


def stack_line(manifest: str, facts: dict[str, Any]) -> str:
    """One line about the stack a manifest declares."""
    if manifest == "pyproject.toml":
        python = f"Python {facts['python']}" if facts.get("python") else "Python"
        backend = f", built with {facts['backend']}" if facts.get("backend") else ""
        head = f"{python} project{backend}"
    else:
        head = "JavaScript/TypeScript package (npm)"
    parts = [head]
    if facts.get("dependencies"):
        parts.append("depends on " + ", ".join(facts["dependencies"][:NAMES_MAX]))
    if facts.get("dev"):
        parts.append("dev tools " + ", ".join(facts["dev"][:NAMES_MAX]))
    if facts.get("tools"):
        parts.append("configured tools " + ", ".join(facts["tools"][:NAMES_MAX]))
    return "; ".join(parts)


def stack_seed(files: Mapping[str, str], name: str) -> SeedDraft | None:
    """The tech stack, from the manifests."""
    found = manifests(files)
    if not found:
        return None
    lines = [f"- {stack_line(manifest, facts)} ({manifest})" for manifest, facts in found]
    where = ", ".join(manifest for manifest, _ in found)
    return SeedDraft(
        title=f"Tech stack of {name}",
        content="What: the languages, libraries and tools the project uses\n"
        + "\n".join(lines)
        + f"\nWhere: {where}",
        type="architecture",
        topic_key="project/stack",
        files=tuple(manifest for manifest, _ in found),
    )


def command_lines(files: Mapping[str, str]) -> list[tuple[str, str]]:
    """(file, ``command``) pairs: key Makefile targets, package scripts, CI steps."""
    commands: list[tuple[str, str]] = []
    makefile = first_of(files, MAKEFILE_NAMES)
    if makefile:
        targets = make_targets(makefile[1])
        for target in [t for t in KEY_TARGETS if t in targets] or list(targets)[:5]:
            recipe = f" (runs {targets[target]})" if targets[target] else ""
            commands.append((makefile[0], f"make {target}{recipe}"))
    scripts = package_facts(files.get("package.json", "")).get("scripts", {})
    for script in [s for s in KEY_SCRIPTS if s in scripts]:
        commands.append(("package.json", f"npm run {script} (runs {scripts[script]})"))
    for path, text in sorted(files.items()):
        if path.startswith(WORKFLOW_DIR) or path in CI_FILES:
            commands += [(path, command) for command in ci_commands(text)]
    return commands[: COMMANDS_MAX * 2]


def build_seed(files: Mapping[str, str], name: str) -> SeedDraft | None:
    """How to build and test the project."""
    commands = command_lines(files)
    if not commands:
        return None
    sources = tuple(dict.fromkeys(path for path, _ in commands))
    lines = [f"- {command} ({path})" for path, command in commands]
    return SeedDraft(
        title=f"How to build and test {name}",
        content="What: the commands that build, check and test the project\n"
        + "\n".join(lines)
        + f"\nWhere: {', '.join(sources)}",
        type="config",
        topic_key="project/build-and-test",
        files=sources,
    )


def services_seed(files: Mapping[str, str], name: str) -> SeedDraft | None:
    """The services a compose file runs."""
    compose = first_of(files, COMPOSE_NAMES)
    services = compose_services(compose[1]) if compose else []
    if not compose or not services:
        return None
    return SeedDraft(
        title=f"Services {name} runs with compose",
        content=f"What: {', '.join(services)}\nWhere: {compose[0]}",
        type="config",
        topic_key="project/services",
        files=(compose[0],),
    )


def seeds_from(files: Mapping[str, str], fallback_name: str) -> list[SeedDraft]:
    """Every seed the project's files support (none for a project without them)."""
    name = project_name(files, fallback_name)
    makers = (brief_seed, stack_seed, build_seed, services_seed)
    return [seed for make in makers if (seed := make(files, name)) is not None]


__all__ = [
    "CI_FILES",
    "FILE_MAX_BYTES",
    "SEED_FILES",
    "WORKFLOW_DIR",
    "SeedDraft",
    "ci_commands",
    "compose_services",
    "make_targets",
    "package_facts",
    "pyproject_facts",
    "readme_brief",
    "seeds_from",
]
