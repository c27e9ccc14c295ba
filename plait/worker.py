"""``plait worker``: the drain loop (and the recall index's embedding pass) as its own process."""

from __future__ import annotations

import asyncio
from pathlib import Path

from plait.background import Background
from plait.memory import knowledge_factory, make_checkpointer, project_group_id
from plait.redact import redacted_logger
from plait.settings import Settings
from plait.wiring import open_backends, open_recall

logger = redacted_logger("plait")


async def run_worker(
    settings: Settings, project_dir: Path, *, consumer: str | None = None, once: bool = False
) -> int:
    """Drain until the queue is empty (``once``) or forever; return how many episodes it wrote."""
    backends = await open_backends(settings, allow_degraded=False)
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
                await background.quiet_queue()
            report = await background.drain()
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


__all__ = ["run_worker"]
