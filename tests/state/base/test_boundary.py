"""The one failure boundary: translation into plait's errors, fail-open, misuse raised."""

from __future__ import annotations

import logging

import pytest

from plait.state.base.boundary import attempt, describe, fail_open, fail_open_sync, translate
from plait.state.base.errors import BackendError, BackendUnavailable, InvalidHookPayload, PlaitError


async def boom(error: BaseException) -> str:
    raise error


def test_translate_keeps_plait_errors_and_maps_the_rest() -> None:
    own = BackendUnavailable("FalkorDB at 'x' unreachable")
    assert translate(own) is own
    refused = translate(ConnectionRefusedError("connection refused"))
    assert isinstance(refused, BackendUnavailable)
    assert str(refused) == "ConnectionRefusedError: connection refused"
    assert isinstance(refused.__cause__, ConnectionRefusedError)
    assert isinstance(translate(TimeoutError("LLM timed out")), BackendError)
    assert isinstance(translate(KeyError("x")), BackendError)


def test_describe_is_one_redacted_line_never_empty() -> None:
    error = RuntimeError("login to redis://:hunter2secret@db:6379 failed\nretrying")
    text = describe(error)
    assert "hunter2secret" not in text and "\n" not in text
    assert text.startswith("RuntimeError: ")
    assert describe(RuntimeError()) == "RuntimeError: Unspecified run-time error."
    assert describe(TimeoutError()) == "TimeoutError: Timeout expired."
    assert describe(BackendError("")).startswith("BackendError: Something plait calls failed")


def test_describe_names_the_cause_of_an_empty_error() -> None:
    class Quiet(Exception):
        pass

    try:
        try:
            raise ConnectionRefusedError(111, "Connection refused")
        except OSError as error:
            raise Quiet() from error
    except Quiet as quiet:
        text = describe(quiet)
    assert (
        text
        == "Quiet: no detail was given (from ConnectionRefusedError: [Errno 111] Connection refused)"
    )


async def test_fail_open_logs_why_and_returns_the_default(caplog: pytest.LogCaptureFixture) -> None:
    heard: list[PlaitError] = []
    with caplog.at_level(logging.WARNING, logger="plait"):
        result = await fail_open(
            "a hook", boom(OSError("disk full")), "default", on_failure=heard.append
        )
    assert result == "default" and isinstance(heard[0], BackendError)
    assert "a hook failed open: OSError: disk full" in caplog.text
    assert await fail_open("a hook", boom(ValueError("x")), None) is None
    assert fail_open_sync("sync", lambda: 1 / 0, -1) == -1


async def test_misuse_reaches_the_caller() -> None:
    with pytest.raises(InvalidHookPayload):
        await fail_open(
            "a hook", boom(InvalidHookPayload("missing", field="input.sessionID")), None
        )
    with pytest.raises(InvalidHookPayload):
        await attempt(boom(InvalidHookPayload("missing")))


async def test_attempt_returns_the_value_or_the_translated_error() -> None:
    async def fine() -> int:
        return 3

    assert await attempt(fine()) == 3
    assert isinstance(await attempt(boom(ConnectionResetError())), BackendUnavailable)
