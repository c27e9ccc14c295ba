"""Redis clients' errors in plait's tree: what every Redis backend raises instead of redis-py's.

A refused, dropped or timed-out connection (and a server still loading its data) is
:class:`~plait.BackendUnavailable`; any other Redis error is
:class:`~plait.BackendError`. Messages say which operation failed, secrets redacted.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Coroutine, Iterator
from typing import Any

from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from plait.state.base.boundary import describe
from plait.state.base.errors import BackendError, BackendUnavailable, PlaitError

UNREACHABLE = (RedisConnectionError, RedisTimeoutError, OSError)


def translate_redis(error: RedisError | OSError, what: str) -> PlaitError:
    """``error``, raised while doing ``what``, as plait's error."""
    kind = BackendUnavailable if isinstance(error, UNREACHABLE) else BackendError
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


__all__ = ["UNREACHABLE", "redis_errors", "translate_redis", "translated"]
