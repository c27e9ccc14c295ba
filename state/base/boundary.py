"""The one boundary between plait and the world around it.

:func:`translate` turns any outside error into plait's tree (a refused or dropped connection is
:class:`~plait.BackendUnavailable`, anything else unexpected
:class:`~plait.BackendError`; backends translate their own clients' errors first), and
:func:`describe` says what happened in one redacted line. :func:`attempt`, :func:`fail_open` and
:func:`fail_open_sync` are the only places plait catches everything: a broken memory layer logs
why and hands back a default, never an exception into the agent. Misuse
(:class:`~plait.UsageError`: a bad payload, a bad argument) is not a failure of plait's and
always reaches the caller, who can fix it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from plait.state.base.errors import BackendError, BackendUnavailable, PlaitError, UsageError
from plait.state.base.redact import redact, redacted_logger

logger = redacted_logger("plait")

REASON_MAX_CHARS = 500


def describe(error: BaseException) -> str:
    """What went wrong, on one line, secrets redacted, never empty nor a bare type name.

    plait's own errors are written for people and say it themselves; any other error is
    ``Type: message``. An error without a message is described by its type's docstring
    (``TimeoutError: Timeout expired.``), and an error it was raised from.
    """
    name = type(error).__name__
    text = " ".join(redact(str(error)).split())[:REASON_MAX_CHARS]
    if text and text != name:
        return text if isinstance(error, PlaitError) else f"{name}: {text}"
    cause = error.__cause__ or error.__context__
    because = f" (from {describe(cause)})" if cause is not None and cause is not error else ""
    return f"{name}: {_meaning(type(error))}{because}"[:REASON_MAX_CHARS]


def _meaning(kind: type[BaseException]) -> str:
    """The first line of an error type's docstring (its own, not a base class's)."""
    doc = kind.__dict__.get("__doc__") or ""
    return doc.strip().splitlines()[0] if doc.strip() else "no detail was given"


def translate(error: BaseException) -> PlaitError:
    """``error`` in plait's tree: itself if it is one, else what it means for plait."""
    if isinstance(error, PlaitError):
        return error
    # A refused or dropped connection is the server's; a timeout may be the answer's (an LLM).
    kind = BackendUnavailable if isinstance(error, ConnectionError) else BackendError
    translated = kind(describe(error))
    translated.__cause__ = error
    return translated


async def attempt[T](work: Awaitable[T]) -> T | PlaitError:
    """The result of ``work``, or what went wrong as a :class:`PlaitError` (misuse is raised)."""
    try:
        return await work
    except UsageError:
        raise
    except Exception as error:  # the boundary: every outside failure becomes plait's
        return translate(error)


async def fail_open[T](
    what: str,
    work: Awaitable[T],
    default: T,
    *,
    on_failure: Callable[[PlaitError], object] | None = None,
) -> T:
    """The result of ``work``, or ``default`` with a warning saying why (misuse is raised).

    ``on_failure`` hears of the failure too (a host that tells its caller, say).
    """
    result = await attempt(work)
    if not isinstance(result, PlaitError):
        return result
    logger.warning("plait: %s failed open: %s", what, describe(result))
    if on_failure is not None:
        on_failure(result)
    return default


def fail_open_sync[T](what: str, work: Callable[[], T], default: T) -> T:
    """:func:`fail_open` for synchronous work."""
    try:
        return work()
    except UsageError:
        raise
    except Exception as error:  # the boundary: nothing of plait's breaks the agent
        logger.warning("plait: %s failed open: %s", what, describe(translate(error)))
        return default


__all__ = ["attempt", "describe", "fail_open", "fail_open_sync", "translate"]
