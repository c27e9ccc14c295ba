"""Redis clients' errors in plait's tree: what every Redis backend raises instead of redis-py's.

A refused, dropped or timed-out connection (and a server still loading its data) is
:class:`~plait.BackendUnavailable`, and so is a cluster's slot on the move (a reshard, a
failover): the same call succeeds once the slot settles, so it is tried again, not given up.
Any other Redis error is :class:`~plait.BackendError`. Messages say which operation failed,
secrets redacted.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Coroutine, Iterator
from typing import Any

from redis.exceptions import (
    AskError,
    ClusterError,
    MovedError,
    RedisError,
    SlotNotCoveredError,
    TryAgainError,
)
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from plait.state.base.boundary import describe
from plait.state.base.errors import BackendError, BackendUnavailable, PlaitError

UNREACHABLE = (RedisConnectionError, RedisTimeoutError, OSError)
# ClusterError: the cluster is down, a primary is, or redis-py followed a slot on the move
# (MOVED, ASK, TRYAGAIN) until its request TTL ran out ("TTL exhausted", mid-reshard)
SLOT_MOVING = (AskError, ClusterError, MovedError, SlotNotCoveredError, TryAgainError)
# A script that meets its slot half moved: a key it touches went to the slot's new primary
# (Redis refuses the script instead of redirecting it).
SLOT_MOVED_IN_SCRIPT = "non local key"


def is_transient(error: RedisError | OSError) -> bool:
    """Whether ``error`` passes once the server or the slot is back in place."""
    return isinstance(error, UNREACHABLE + SLOT_MOVING) or SLOT_MOVED_IN_SCRIPT in str(error)


def translate_redis(error: RedisError | OSError, what: str) -> PlaitError:
    """``error``, raised while doing ``what``, as plait's error."""
    kind = BackendUnavailable if is_transient(error) else BackendError
    translated = kind(f"Redis {what} failed: {describe(error)}")
    translated.__cause__ = error
    return translated


@contextlib.contextmanager
def redis_errors(what: str) -> Iterator[None]:
    """Raise plait's error for a Redis error raised inside the block."""
    try:
        yield
    except (RedisError, OSError) as error:
        raise translate_redis(error, what) from error


def translated[**P, T](
    method: Callable[P, Coroutine[Any, Any, T]],
) -> Callable[P, Coroutine[Any, Any, T]]:
    """A coroutine method whose Redis errors are plait's (named after the method)."""
    what = method.__name__.replace("_", " ").strip()

    @functools.wraps(method)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
        with redis_errors(what):
            return await method(*args, **kwargs)

    return wrapper


__all__ = ["UNREACHABLE", "is_transient", "redis_errors", "translate_redis", "translated"]
