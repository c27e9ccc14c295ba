"""A host's transcript file (JSON lines) read record by record into past calls.

What every host's ``history`` reader shares: blank lines are passed over, a line that is not
JSON (or that its host's reader cannot use) is a :class:`~plait.state.history.Skipped` named
``file:line``, and a record that says something is a :class:`~plait.state.history.PastCall`
with an id of the host's choosing, so importing twice records nothing twice.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from plait.state.base.errors import PlaitError
from plait.state.history import PastCall, Skipped
from plait.state.intents import Intent

# what a record says (raises ValueError, AttributeError, TypeError or PlaitError when unusable)
Read = Callable[[Any], list[Intent]]
# a record's session and call id, from the record, its line number and where it is
Identify = Callable[[Any, int, str], tuple[str, str]]


def transcript_calls(path: Path, read: Read, identify: Identify) -> Iterator[PastCall | Skipped]:
    """Every record of one transcript, in order, as plait's intents."""
    with path.open(encoding="utf-8", errors="replace") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            where = f"{path.name}:{number}"
            try:
                record = json.loads(line)
                intents = read(record)
            except (ValueError, AttributeError, TypeError, PlaitError) as error:
                yield Skipped(where=where, reason=str(error).splitlines()[0][:200])
                continue
            if intents:
                session, call_id = identify(record, number, where)
                yield PastCall(
                    session_id=session, parent_id=None, call_id=call_id, intents=tuple(intents)
                )


__all__ = ["transcript_calls"]
