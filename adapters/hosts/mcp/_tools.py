"""What the session tools do, apart from the MCP wiring: run, index, search, fetch, report."""

from __future__ import annotations

import os
import re
import ssl
from collections import Counter
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import httpx
from pydantic import BaseModel, Field, model_validator

from plait.adapters.hosts.mcp._budget import (
    ANSWER_BUDGET_BYTES,
    cut_bytes,
    fits,
    overflow_answer,
    pretty_json,
    render_hits,
)
from plait.adapters.hosts.mcp.netguard import GuardedResponse, fetch_guarded
from plait.adapters.hosts.mcp.sandbox import CommandResult, resolve_inside, run_command
from plait.nodes.capture import Source, command_events
from plait.state.base.boundary import attempt, describe, fail_open
from plait.state.base.errors import BackendUnavailable, PlaitError, UnsafeURL, UsageError
from plait.state.base.redact import redact, redact_url, redacted_logger
from plait.state.base.settings import Settings
from plait.state.corpus import Corpus, IndexResult, private_body, utf8_len
from plait.state.events import EventKind, SessionEvent

if TYPE_CHECKING:
    from plait.forgetting import Forgotten, Selection
    from plait.observations import Observations

logger = redacted_logger("plait.mcp")
# httpx logs every request's URL (credentials and query included) at INFO: plait's fetches go
# through it, so its records are redacted where they are made.
redacted_logger("httpx")

DEFAULT_SESSION = "mcp"
SESSION_VARIABLE = "PLAIT_SESSION_ID"
SOURCE_MAX_CHARS = 200
FETCH_MAX_BYTES = 8 * 1024 * 1024
INDEX_FILE_MAX_BYTES = 16 * 1024 * 1024
FETCH_TIMEOUT_SECONDS = 20.0
BATCH_STEPS_MAX = 20
TOOL_HOOK = "mcp"
TIMEOUT_EXIT = 124
REFERENCE = re.compile(r"corpus:(?P<source>.+)#(?P<chunk>\d+)")
HTTP_ERROR = 400
ALLOW_HINT = " (a host listed in mcp.fetch_allow_hosts is fetched all the same)"


class EventRecorder(Protocol):
    """Where tool events go: a ``plait.Memory``'s dispatch is one."""

    async def record(
        self, session_id: str, events: Sequence[SessionEvent]
    ) -> Sequence[SessionEvent]:
        """Make the events durable in the session's root log."""
        ...

    async def root_of(self, session_id: str) -> str:
        """The session's root (itself when it has no parent, or when that is not known)."""
        ...

    async def event_count(self, root_session_id: str) -> int | None:
        """Events in the root's log (None: not known here)."""
        ...


class BatchStep(BaseModel):
    """One step of ``session_batch_execute``: a shell command or a corpus search."""

    command: str | None = Field(default=None, description="Shell command run in the worktree.")
    search: str | None = Field(default=None, description="Query against the session's corpus.")
    timeout: float | None = Field(default=None, description="Seconds for a command (max 120).")

    @model_validator(mode="after")
    def _one_action(self) -> BatchStep:
        if (self.command is None) == (self.search is None):
            raise ValueError("a step has exactly one of 'command' or 'search'")
        return self


def session_for(session_id: str | None) -> str:
    """The session a call belongs to: the argument, else ``$PLAIT_SESSION_ID``, else ``mcp``."""
    return session_id or os.environ.get(SESSION_VARIABLE) or DEFAULT_SESSION


def make_event(session: str, kind: EventKind, summary: str, **extra: Any) -> SessionEvent:
    """A redacted event from this server (the root is filled in when it is recorded)."""
    body = redact(str(extra.pop("body", "")))
    return SessionEvent(
        root_session_id=session,
        session_id=session,
        kind=kind,
        summary=redact(summary),
        body=body,
        source_hook=TOOL_HOOK,
        **extra,
    )


def command_header(result: CommandResult) -> str:
    """First lines of a command's answer: the command and how it ended."""
    if result.timed_out:
        status = f"killed at its timeout after {result.seconds:.1f} s (partial output kept)"
    else:
        status = f"exit {result.exit_code}"
    return f"$ {result.command}\n[{status}]"


def html_to_markdown(html: str) -> str:
    """HTML as markdown (scripts, styles and their text dropped)."""
    from bs4 import BeautifulSoup
    from markdownify import MarkdownConverter

    soup = BeautifulSoup(html, "html.parser")
    for tag in soup(["script", "style", "noscript", "template"]):
        tag.decompose()
    text = MarkdownConverter(heading_style="ATX").convert_soup(soup)
    return "\n".join(line.rstrip() for line in text.splitlines()).strip()


def page_text(content_type: str, body: str) -> str:
    """A fetched body as indexable text: HTML to markdown, JSON pretty-printed, else as is."""
    kind = content_type.split(";")[0].strip().lower()
    if kind in ("text/html", "application/xhtml+xml") or (
        not kind and body.lstrip()[:15].lower().startswith(("<!doctype html", "<html"))
    ):
        return html_to_markdown(body)
    if kind.endswith("json") or kind.endswith("+json"):
        return pretty_json(body) or body
    return body


@dataclass(kw_only=True)
class SessionTools:
    """The session tools over a worktree, a corpus and an event recorder."""

    recorder: EventRecorder
    worktree: Path
    corpus: Corpus
    settings: Settings | None = None
    observations: Observations | None = None
    forgetting: Callable[[Selection, bool], Awaitable[Forgotten]] | None = None
    fetch_allow_hosts: tuple[str, ...] = ()
    budget: int = ANSWER_BUDGET_BYTES
    running: set[int] = field(default_factory=set)  # process groups of commands running now
    calls: Counter[str] = field(default_factory=Counter)
    events_recorded: int = 0
    bytes_answered: int = 0
    bytes_indexed: int = 0

    # -- plumbing -------------------------------------------------------------------------------
    async def root_of(self, session: str) -> str:
        """The root session (the corpus is per root)."""
        return await self.recorder.root_of(session)

    async def record(self, session: str, events: Sequence[SessionEvent]) -> None:
        """Record events; a failing recorder never fails the tool."""
        if not events:
            return
        work = self.recorder.record(session, list(events))
        if await fail_open("recording a tool's events", work, None) is not None:
            self.events_recorded += len(events)

    async def index_text(
        self, session: str, source: str, text: str, label: str = ""
    ) -> IndexResult:
        """Index text into the session's root corpus."""
        result = await self.corpus.index(await self.root_of(session), source, text, label=label)
        self.bytes_indexed += result.bytes
        return result

    async def fit(
        self, session: str, header: str, text: str, source: str, budget: int
    ) -> tuple[str, str]:
        """The answer within budget, and the corpus reference of the full text.

        Every output is indexed, so ``session_search`` finds it later however short it was; the
        answer carries the text itself when it fits, else an excerpt and the reference. The
        command is the source's name only: its words are not indexed with the output.
        """
        answer = f"{header}\n{text}" if text else header
        reference = ""
        if text.strip():
            reference = (await self.index_text(session, source, text, label="output")).reference
        if fits(answer, budget):
            return answer, reference
        return overflow_answer(header, text, reference, budget), reference

    def answered(self, tool: str, answer: str) -> str:
        """Count a tool's answer (for ``session_stats``) and hand it back."""
        self.calls[tool] += 1
        self.bytes_answered += utf8_len(answer)
        return answer

    # -- commands -------------------------------------------------------------------------------
    async def run(
        self, session: str, command: str, timeout: float | None, budget: int, **options: Any
    ) -> tuple[str, list[SessionEvent]]:
        """Run a command; its answer (within ``budget``) and events."""
        result = await run_command(
            command, cwd=self.worktree, timeout=timeout, groups=self.running, **options
        )
        source = "exec:" + " ".join(command.split())[:SOURCE_MAX_CHARS]
        header = command_header(result)
        answer, reference = await self.fit(session, header, result.output, source, budget)
        exit_code = TIMEOUT_EXIT if result.timed_out else result.exit_code
        events = command_events(
            Source(session_id=session, host=TOOL_HOOK), command, result.output, exit_code=exit_code
        )
        summary = f"$ {command} -> {command_header(result).splitlines()[-1]}"
        refs = (reference,) if reference else ()
        events.append(
            make_event(
                session, EventKind.TOOL_RESULT, summary, body=result.output[-1500:], refs=refs
            )
        )
        return answer, events

    async def execute(self, command: str, timeout: float | None, session_id: str | None) -> str:
        """``session_execute``."""
        session = session_for(session_id)
        answer, events = await self.run(session, command, timeout, self.budget)
        await self.record(session, events)
        return self.answered("session_execute", answer)

    async def execute_file(
        self, path: str, command: str, timeout: float | None, session_id: str | None
    ) -> str:
        """``session_execute_file``: the file on stdin and in ``$FILE``; default ``cat``."""
        session = session_for(session_id)
        resolved = resolve_inside(self.worktree, path)
        if not resolved.is_file():
            raise UsageError(f"no file {path!r} in the worktree")
        relative = str(resolved.relative_to(self.worktree.resolve()))
        with resolved.open("rb") as handle:
            answer, events = await self.run(
                session,
                command or "cat",
                timeout,
                self.budget,
                stdin=handle,
                env={"FILE": str(resolved)},
            )
        read = make_event(
            session, EventKind.FILE_READ, f"read {relative}", refs=(relative,), key=relative
        )
        await self.record(session, [read, *events])
        return self.answered("session_execute_file", answer)

    async def batch(self, steps: Sequence[BatchStep], session_id: str | None) -> str:
        """``session_batch_execute``: steps in order, each with its share of the budget."""
        session = session_for(session_id)
        if not steps or len(steps) > BATCH_STEPS_MAX:
            raise UsageError(f"give 1 to {BATCH_STEPS_MAX} steps, not {len(steps)}")
        share = max(512, (self.budget - 64 * len(steps)) // len(steps))
        sections: list[str] = []
        events: list[SessionEvent] = []
        for number, step in enumerate(steps, start=1):
            if step.command is not None:
                answer, step_events = await self.run(session, step.command, step.timeout, share)
                events.extend(step_events)
            else:
                answer = await self.search_answer(session, step.search or "", 5, None, share)
            sections.append(f"## step {number}\n{answer}")
        await self.record(session, events)
        return self.answered("session_batch_execute", cut_bytes("\n\n".join(sections), self.budget))

    # -- the corpus -----------------------------------------------------------------------------
    async def index(
        self,
        content: str | None,
        path: str | None,
        source: str | None,
        label: str,
        session_id: str | None,
    ) -> str:
        """``session_index``: inline content or a worktree file; same source and label replaces."""
        session = session_for(session_id)
        if (content is None) == (path is None):
            raise UsageError("give exactly one of 'content' or 'path'")
        events: list[SessionEvent] = []
        if path is not None:
            resolved = resolve_inside(self.worktree, path)
            if not resolved.is_file():
                raise UsageError(f"no file {path!r} in the worktree")
            if resolved.stat().st_size > INDEX_FILE_MAX_BYTES:
                raise UsageError(f"{path!r} is over {INDEX_FILE_MAX_BYTES} bytes; index a part")
            relative = str(resolved.relative_to(self.worktree.resolve()))
            content = resolved.read_text(encoding="utf-8", errors="replace")
            source = source or relative
            events.append(
                make_event(
                    session, EventKind.FILE_READ, f"read {relative}", refs=(relative,), key=relative
                )
            )
        if not source:
            raise UsageError("inline content needs a 'source' name")
        result = await self.index_text(session, source, content or "", label)
        events.append(self.discovery(session, result))
        await self.record(session, events)
        return self.answered("session_index", self.describe_index(result))

    @staticmethod
    def discovery(session: str, result: IndexResult) -> SessionEvent:
        """The event of an indexed source."""
        return make_event(
            session,
            EventKind.DISCOVERY,
            f"indexed {result.source} ({result.chunks} chunks, {result.bytes} bytes)",
            refs=(result.reference,),
            key=f"corpus:{result.source}#{result.label}",
        )

    @staticmethod
    def describe_index(result: IndexResult) -> str:
        """The answer for an indexing."""
        label = f" label {result.label!r}" if result.label else ""
        replaced = f"; replaced {result.replaced} old chunks" if result.replaced else ""
        evicted = (
            f"; dropped the {len(result.evicted)} oldest sources to stay within "
            "corpus.max_bytes_per_root"
            if result.evicted
            else ""
        )
        return (
            f"indexed {result.source!r}{label}: {result.chunks} chunks, {result.bytes} bytes"
            f"{replaced}{evicted}; first chunk {result.reference}. "
            "Find passages with session_search."
        )

    async def search_answer(
        self, session: str, query: str, limit: int, source: str | None, budget: int
    ) -> str:
        """Search the session's root corpus and render the hits within ``budget``."""
        root = await self.root_of(session)
        reference = REFERENCE.fullmatch(query.strip())
        if reference is not None:
            hit = await self.corpus.chunk(root, reference["source"], int(reference["chunk"]))
            return render_hits(query, [hit] if hit else [], budget)
        hits = await self.corpus.search(root, query, limit=max(1, min(limit, 20)), source=source)
        return render_hits(query, hits, budget)

    async def search(
        self, query: str, limit: int, source: str | None, session_id: str | None
    ) -> str:
        """``session_search``."""
        session = session_for(session_id)
        answer = await self.search_answer(session, query, limit, source, self.budget)
        # the query is redacted before it is quoted: quoting escapes the lines that label a secret
        summary = f"searched corpus for {redact(query)!r}: {redact(answer.splitlines()[0])}"
        await self.record(session, [make_event(session, EventKind.TOOL_RESULT, summary)])
        return self.answered("session_search", answer)

    async def fetch_and_index(
        self, url: str, source: str | None, label: str, session_id: str | None
    ) -> str:
        """``session_fetch_and_index``: GET, convert, index; the answer names the reference."""
        session = session_for(session_id)
        try:
            response = await fetch(url, self.fetch_allow_hosts)
        except UnsafeURL as error:
            raise UnsafeURL(error.url, f"{error.reason}{ALLOW_HINT}") from None
        text = page_text(response.content_type, response.text)
        result = await self.index_text(session, source or url, text, label)
        await self.record(session, [self.discovery(session, result)])
        preview = cut_bytes(private_body(text), min(1024, self.budget // 4))
        answer = f"{self.describe_index(result)}\n\npreview:\n{preview}"
        return self.answered("session_fetch_and_index", cut_bytes(answer, self.budget))

    # -- reports --------------------------------------------------------------------------------
    async def stats(self, session_id: str | None) -> str:
        """``session_stats``: the corpus, events recorded, this server's counters."""
        session = session_for(session_id)
        root = await self.root_of(session)
        corpus = await self.corpus.stats(root)
        lines = [
            f"session {session} (root {root})",
            f"corpus: {corpus.chunks} chunks, {corpus.bytes} bytes, {len(corpus.sources)} sources",
        ]
        lines += [
            f"  - {info.source}{f' [{info.label}]' if info.label else ''}: "
            f"{info.chunks} chunks, {info.bytes} bytes"
            for info in corpus.sources[:50]
        ]
        logged = await fail_open("counting events", self.recorder.event_count(root), None)
        if logged is not None:
            lines.append(f"events in the session log: {logged}")
        lines.append(f"events recorded by this server: {self.events_recorded}")
        lines.append(
            f"answers: {self.bytes_answered} bytes; kept out of context: {self.bytes_indexed} bytes"
        )
        lines.append(
            "calls: " + (", ".join(f"{k}={v}" for k, v in sorted(self.calls.items())) or "none")
        )
        return self.answered("session_stats", cut_bytes("\n".join(lines), self.budget))

    async def forget(
        self, *, session: str | None, before: str | None, match: str | None, dry_run: bool
    ) -> str:
        """``session_forget``: captured events and their copies (see :mod:`plait.forgetting`)."""
        if self.forgetting is None:
            raise UsageError("forgetting needs plait's memory behind this server")
        from plait.forgetting import Selection, describe

        try:
            when = datetime.fromisoformat(before) if before else None
        except ValueError:
            raise UsageError(f"before {before!r}: not an ISO 8601 date or time") from None
        if when is not None and when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        selection = Selection(session=session, before=when, match=match or None)
        found = await self.forgetting(selection, dry_run)
        verb = "would forget" if dry_run else "forgot"
        lines = [*describe(found), f"{verb} {found.count} event(s)"]
        return self.answered("session_forget", cut_bytes("\n".join(lines), self.budget))

    async def doctor(self) -> str:
        """``session_doctor``: plait's health checks and this server's own."""
        from plait.doctor import run_checks

        settings = self.settings or Settings.load(self.worktree)
        checks = await run_checks(settings, self.worktree)
        lines = [
            f"{check.component}: {check.status}{' (required)' if check.required else ''}"
            f" — {check.detail}"
            for check in checks
        ]
        lines.append(f"corpus: {await self.corpus_health()} — {self.corpus.location}")
        lines.append(f"worktree: {self.worktree}")
        return self.answered("session_doctor", cut_bytes("\n".join(lines), self.budget))

    async def corpus_health(self) -> str:
        """``ok`` if the corpus file answers a query, else why not."""
        result = await attempt(self.corpus.stats(DEFAULT_SESSION))
        return f"unavailable ({describe(result)})" if isinstance(result, PlaitError) else "ok"


@cache
def tls_context() -> ssl.SSLContext:
    """The certificate store every fetch verifies against, loaded once (tens of ms each time)."""
    return httpx.create_ssl_context()


async def fetch(url: str, allow_hosts: Collection[str] = ()) -> GuardedResponse:
    """GET a public URL (at most :data:`FETCH_MAX_BYTES`), every redirect checked.

    Raises:
        UnsafeURL: the URL or a redirect goes to a loopback, private, link-local or metadata
            address (and its host is not in ``allow_hosts``), or is not http(s).
        BackendUnavailable: the server could not be reached or answered an HTTP error.
    """
    try:
        async with httpx.AsyncClient(timeout=FETCH_TIMEOUT_SECONDS, verify=tls_context()) as client:
            response = await fetch_guarded(
                client, url, allow_hosts=allow_hosts, max_bytes=FETCH_MAX_BYTES
            )
    except httpx.HTTPError as error:
        raise BackendUnavailable(
            f"fetching {redact_url(url)!r} failed: {describe(error)}"
        ) from None
    if response.status_code >= HTTP_ERROR:
        raise BackendUnavailable(
            f"fetching {redact_url(response.url)!r} failed: HTTP {response.status_code}"
        )
    return response


__all__ = ["BatchStep", "EventRecorder", "SessionTools", "session_for"]
