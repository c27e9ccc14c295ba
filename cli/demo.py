"""``plait demo``: replay a long coding session and show what survives each compaction."""

from __future__ import annotations

import re
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table

from plait.adapters.hosts.opencode.hooks import OpenCodeHooks
from plait.adapters.hosts.opencode.replay import SessionReplay
from plait.devtools.demo_session import EXPECTED, play
from plait.memory import Memory

PERSISTENT = re.compile(r"<persistent_memory\b.*?</persistent_memory>", re.DOTALL)
ENVELOPE = re.compile(r"<session_memory\b.*?</session_memory>", re.DOTALL)


def find_envelope(text: str) -> str:
    """The ``<session_memory>`` block inside a message, or ""."""
    match = ENVELOPE.search(text)
    return match.group(0) if match else ""


@dataclass
class CompactionReport:
    """What one compaction kept."""

    number: int
    before: str
    after: str
    present: dict[str, bool] = field(default_factory=dict)
    absent: dict[str, bool] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """Everything expected survived and everything stale is gone."""
        return all(self.present.values()) and all(self.absent.values())


def check(number: int, envelope: str) -> tuple[dict[str, bool], dict[str, bool]]:
    """Which expected fragments are in the envelope's session part, and which stale ones are out.

    ``<persistent_memory>`` is history from the knowledge graph (it may well mention a reversed
    decision as what used to hold), so only the session snapshot is checked.
    """
    text = PERSISTENT.sub("", envelope).lower()
    expected = EXPECTED[number]
    return (
        {fragment: fragment in text for fragment in expected.present},
        {fragment: fragment not in text for fragment in expected.absent},
    )


async def run_session(memory: Memory) -> list[CompactionReport]:
    """Replay the scripted session; collect a report per compaction."""
    reports: list[CompactionReport] = []

    async def on_compaction(number: int, context: list[str], after: str) -> None:
        envelope = find_envelope(after)
        present, absent = check(number, envelope)
        before = context[0] if context else ""
        reports.append(CompactionReport(number, before, envelope, present, absent))

    await play(SessionReplay(runner=OpenCodeHooks(memory)), on_compaction)
    return reports


def show(console: Console, report: CompactionReport) -> None:
    """Print a compaction: the envelope the summarizer got, the one after, and the checks."""
    console.rule(f"[bold]compaction {report.number}")
    console.print(
        Panel(
            Syntax(report.before or "(none)", "xml", word_wrap=True),
            title="into the summarizer",
            subtitle=f"{len(report.before.encode())} bytes",
        )
    )
    console.print(
        Panel(
            Syntax(report.after or "(none)", "xml", word_wrap=True),
            title="next model call",
            subtitle=f"{len(report.after.encode())} bytes",
        )
    )
    table = Table("expected", "kept?", title="what survived")
    for fragment, found in report.present.items():
        table.add_row(f"present: {fragment}", "[green]yes[/]" if found else "[red]LOST[/]")
    for fragment, gone in report.absent.items():
        table.add_row(f"gone: {fragment}", "[green]gone[/]" if gone else "[red]STILL THERE[/]")
    console.print(table)


NEXT_SESSION_QUESTION = "New session: which cache did we settle on for the invoice export?"


async def next_session(console: Console, memory: Memory) -> bool:
    """Drain the first session into the knowledge graph; show a new session recalling it."""
    assert memory.background is not None
    await memory.background.drain()
    console.rule("[bold]a new session in the same project")
    console.print(
        "the first session is in long-term memory: every event in the recall index, "
        f"{memory.background.written_total} of them (the lasting knowledge) in the knowledge graph"
    )
    session = SessionReplay(runner=OpenCodeHooks(memory))
    await session.start()  # session.created: plait prefetches the project's memory meanwhile
    await memory.background.refreshed()  # (a person takes longer to type the first message)
    envelope = find_envelope(await session.user(NEXT_SESSION_QUESTION))
    console.print(
        Panel(
            Syntax(envelope or "(none)", "xml", word_wrap=True),
            title="new session, first model call",
            subtitle=f"{len(envelope.encode())} bytes",
        )
    )
    recalled = "<persistent_memory" in envelope and "redis" in envelope.lower()
    verdict = "[green]recalled[/]" if recalled else "[red]nothing recalled[/]"
    console.print(f"long-term memory: {verdict}")
    return recalled


async def run_demo(
    console: Console, *, data_dir: Path | None = None, project_dir: Path | None = None
) -> bool:
    """The whole demo; True when every compaction kept what it should."""
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="plait-demo-") as scratch:
        project = project_dir or Path(scratch) / "invoices"
        project.mkdir(parents=True, exist_ok=True)
        async with Memory.open(project, data_dir or Path(scratch) / "data") as memory:
            where = "in memory (degraded)" if memory.degraded else "embedded FalkorDB"
            console.print(f"plait demo: project {project.name!r}, hot tier {where}")
            reports = await run_session(memory)
            for report in reports:
                show(console, report)
            recalled = await next_session(console, memory)
    ok = all(report.ok for report in reports) and recalled
    verdict = "[green]everything survived[/]" if ok else "[red]something was lost[/]"
    console.print(f"{verdict} in {time.perf_counter() - started:.1f} s")
    return ok


__all__ = ["CompactionReport", "find_envelope", "run_demo", "run_session"]
