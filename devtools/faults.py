"""``plait bench faults``: the fault matrix, each fault one load run through the real plugin.

Every run is :func:`plait.devtools.load.run_load` (a fresh project, ``plait serve`` as the plugin
starts it, the real OpenCode plugin driven from Node) with one fault injected a second in:
``plait serve`` killed with SIGKILL and started again (on a new port: the plugins must follow it),
the hot tier killed (plait brings its embedded server back), the hot tier hung (SIGSTOP, then
SIGCONT), an external Redis flapping (down and up three times), and the spool capped so small that
the service refuses calls with 503 (what a full disk does to it; the plugins keep the calls in
their outboxes). After each run the bench waits for the outboxes, then the spool, to empty (how
long each took, with no further hook from anyone, is in the table) and counts
every prompt the plugins sent: stored, lost, stored twice, out of order, and how many model calls
carried an envelope. Nothing here is a test: the table goes to ``docs/benchmarks.md``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from plait.devtools.load import LoadOptions, LoadReport, run_load

FAULTS_TITLE = "Faults"
BASE = LoadOptions(sessions=10, hooks=80, pace_ms=100, outage_after_s=1.0, settle_s=120.0)
# Within a run's last three seconds (80 hooks 100 ms apart play for about ten), and lasting
# past its end
LAST_CALLS_S = 7.0
QUIET_OUTAGE_S = 4.0


@dataclass(frozen=True, kw_only=True)
class Fault:
    """One row of the matrix: what is done, as load options over :data:`BASE`."""

    name: str
    options: LoadOptions

    @property
    def outlasts(self) -> bool:
        """Whether it comes with the run's last calls and lasts past them.

        How long after it every call was recorded then says when, with nobody calling (in the
        others, calls went on after it).
        """
        return LAST_CALLS_S in (self.options.outage_after_s, self.options.kill_serve_after_s)


FAULTS = (
    Fault(name="none", options=BASE),
    Fault(
        name="plait serve killed -9 and restarted (new port)",
        options=replace(BASE, kill_serve_after_s=1.0),
    ),
    Fault(
        name="hot tier killed (embedded: plait restarts it)", options=replace(BASE, outage_s=2.0)
    ),
    Fault(name="hot tier hung 3 s (SIGSTOP, SIGCONT)", options=replace(BASE, hang_s=3.0)),
    Fault(
        name="external Redis flapping: down 1 s, three times",
        options=replace(BASE, redis="external", outage_s=1.0, flaps=3),
    ),
    Fault(
        name="hot tier killed 2 s with the spool full (4 KB cap: 503, kept in the outbox)",
        options=replace(BASE, outage_s=2.0, spool_max_bytes=4096),
    ),
    # the fault outlasts the run: what was acknowledged meanwhile must be recorded with nobody
    # calling again once the faulted part is back
    Fault(
        name="hot tier hung 4 s as the last calls come (none after)",
        options=replace(BASE, hang_s=QUIET_OUTAGE_S, outage_after_s=LAST_CALLS_S),
    ),
    Fault(
        name="external Redis down 4 s as the last calls come (none after)",
        options=replace(
            BASE, redis="external", outage_s=QUIET_OUTAGE_S, outage_after_s=LAST_CALLS_S
        ),
    ),
    Fault(
        name="plait serve killed -9 as the last calls come, back 4 s later on a new port "
        "(none after)",
        options=replace(BASE, kill_serve_after_s=LAST_CALLS_S, down_s=QUIET_OUTAGE_S),
    ),
)

FAULTS_HEAD = (
    "| fault | hooks | p99 ms | prompts sent | stored | lost | duplicates | "
    "sessions out of order | transforms with envelope | settled s | recorded s | "
    "recorded after back s |\n"
    "|---|---|---|---|---|---|---|---|---|---|---|---|"
)


def fault_row(fault: Fault, report: LoadReport) -> str:
    """One markdown row."""
    share = report.enveloped / report.transforms if report.transforms else 0.0
    after = report.recorded_after_back_s
    back = f"{after:.1f}" if fault.outlasts and after is not None else "–"
    return (
        f"| {fault.name} | {report.hooks} | {report.p99_ms:.0f} | {report.prompts_sent} | "
        f"{report.prompts_stored} | {report.prompts_lost} | {report.duplicates} | "
        f"{report.out_of_order_sessions} | {report.enveloped}/{report.transforms} "
        f"({share:.0%}) | {report.settled_s:.1f} | {report.spool_s:.1f} | {back} |"
    )


def run_faults(names: tuple[str, ...] = ()) -> list[tuple[Fault, LoadReport]]:
    """Run the matrix (or the faults named); each fault's report."""
    chosen = [f for f in FAULTS if not names or any(n in f.name for n in names)]
    return [(fault, run_load(fault.options)) for fault in chosen]


def faults_section(stamp: str, runs: list[tuple[Fault, LoadReport]]) -> str:
    """The ``## Faults`` section of the benchmarks file."""
    rows = "\n".join(fault_row(fault, report) for fault, report in runs)
    base = BASE
    return (
        f"`uv run plait bench faults`: {base.sessions} OpenCode sessions × {base.hooks} hooks "
        f"through the real plugin, {base.pace_ms} ms between a session's hooks, each fault "
        f"{base.outage_after_s:.0f} s in (the last three {LAST_CALLS_S:.0f} s in, as the "
        f"sessions' last calls come, for {QUIET_OUTAGE_S:.0f} s: past the run's end); then the "
        "bench waits until the plugins' outboxes are empty (settled s: after the last hook, with "
        "no further hook from anyone), then until the service's spool is (recorded s: how much "
        "longer until every acknowledged call was recorded), and reads every session's log (see "
        "`plait bench load`). Recorded after back s (the faults that outlast the run): from the "
        "moment the faulted part was back (the hot tier answering again, the killed service "
        "started again, its start-up included) until every call was recorded, read every half "
        "second. Disk full is the service's spool cap: with no root here a real full disk "
        "cannot be made; the ENOSPC path itself is covered by a test.\n\n"
        f"{stamp}\n\n{FAULTS_HEAD}\n{rows}\n"
    )


__all__ = ["FAULTS", "FAULTS_TITLE", "Fault", "faults_section", "run_faults"]
