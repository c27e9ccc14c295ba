"""plait's LangGraph state graphs: hooks, compaction, drain and cache refresh."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import wraps


def on_the_loop[**P, R](route: Callable[P, R]) -> Callable[P, Awaitable[R]]:
    """A router as a coroutine, so that a graph run with ``ainvoke`` decides on its own loop.

    LangGraph runs a plain function's branch in a worker thread: a hand-off there and back at
    every branch of every hook call, for a decision that takes microseconds. The return
    signature stays (``wraps``): the graph still reads the branch's targets from its return
    annotation and hands it the runtime when it asks for one.
    """

    @wraps(route)
    async def decide(*args: P.args, **kwargs: P.kwargs) -> R:
        return route(*args, **kwargs)

    return decide


__all__ = ["on_the_loop"]
