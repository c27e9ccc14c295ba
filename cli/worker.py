"""``plait worker``: the drain loop (and the recall index's embedding pass) as its own process."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from plait.background import Background
from plait.state.base.boundary import attempt
from plait.state.base.errors import PlaitError
from plait.state.base.redact import redacted_logger
from plait.state.base.settings import Settings
from plait.wiring import (
    knowledge_factory,
    make_checkpointer,
    open_backends,
    open_recall,
    project_group_id,
)

logger = redacted_logger("plait")

RETRY_PAUSE_SECONDS = 5.0  # after a drain that failed, as the in-process drain loop waits
# A worker answers no hook: on a machine it shares with plait serve, the hooks come first.
WORKER_NICENESS = 19


def lower_this_process(by: int = WORKER_NICENESS) -> None:
    """Make this process ``by`` nicer (POSIX); where that is refused it keeps its priority."""
    try:
        os.nice(by)
    except (OSError, AttributeError) as error:  # AttributeError: no os.nice (Windows)
        logger.debug("plait worker: keeps its priority: %s", error)


async def run_worker(
    settings: Settings, project_dir: Path, *, consumer: str | None = None, once: bool = False
) -> int:
    """Drain until the queue is empty (``once``) or forever; return how many episodes it wrote.

    Run forever, a drain that fails (the hot tier or the graph down) is logged and tried again
    after a pause: an outage never ends the worker. With ``once`` the failure is raised.
    """
    backends = await open_backends(settings, project_dir, allow_degraded=False)
    recall, embedder = open_recall(settings)
    background = Background(
        store=backends.store,
        settings=settings,
        group_id=project_group_id(settings, project_dir.resolve()),
        knowledge_factory=knowledge_factory(backends),
        checkpointer=make_checkpointer(backends),
        consumer=consumer,
        recall=recall,
        embedder=embedder,
    )
    written = 0
    try:
        while True:
            if not once:
                await attempt(background.quiet_queue())  # a hot tier down: the drain says so
            drained = background.drain_until_empty() if once else background.drain()
            report = await attempt(drained)
            if isinstance(report, PlaitError):
                if once:
                    raise report
                logger.warning("plait worker %s: drain failed: %s", background.consumer, report)
                await asyncio.sleep(min(background.interval_seconds, RETRY_PAUSE_SECONDS))
                continue
            await background.embed_pending()
            written += report.written
            if report.batches or report.dead_lettered:
                logger.info(
                    "plait worker %s: %d written, %d dead-lettered",
                    background.consumer,
                    report.written,
                    report.dead_lettered,
                )
            if once and not report.left_queued:
                return written
            await asyncio.sleep(1.0 if report.batches else background.interval_seconds / 10)
    finally:
        await background.aclose()
        await backends.aclose()


__all__ = ["lower_this_process", "run_worker"]
