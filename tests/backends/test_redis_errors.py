"""Redis errors in plait's tree: what passes once the server or a cluster's slot is back in
place is BackendUnavailable (tried again); anything else is BackendError."""

from __future__ import annotations

import pytest
from redis.exceptions import (
    AskError,
    ClusterDownError,
    ClusterError,
    ResponseError,
    TryAgainError,
)
from redis.exceptions import ConnectionError as RedisConnectionError

from plait.adapters.backends.redis_errors import translate_redis
from plait.state.base.errors import BackendError, BackendUnavailable

NON_LOCAL = (
    "Script attempted to access a non local key in a cluster node script: 6a0aae75, "
    "on @user_script:32."
)


@pytest.mark.parametrize(
    "error",
    [
        RedisConnectionError("Connection refused"),
        TryAgainError("Multiple keys request during rehashing of slot"),
        AskError("3999 127.0.0.1:6381"),
        ClusterDownError("The cluster is down"),
        ClusterError("TTL exhausted."),  # redirections followed mid-reshard until it gave up
        ResponseError(NON_LOCAL),  # a script that met its slot half moved
    ],
)
def test_what_passes_when_the_slot_or_server_is_back_is_tried_again(error: Exception) -> None:
    translated = translate_redis(error, "checkpoint")  # type: ignore[arg-type]
    assert isinstance(translated, BackendUnavailable)
    assert str(translated).startswith("Redis checkpoint failed: ")


def test_any_other_redis_error_is_a_backend_error() -> None:
    wrong = ResponseError("WRONGTYPE Operation against a key holding the wrong kind of value")
    translated = translate_redis(wrong, "append events")
    assert isinstance(translated, BackendError) and not isinstance(translated, BackendUnavailable)
