"""What a host's folder gives the service: :class:`HostWire`, its calls read and answered.

The service's hook routes (OpenCode's ``/v1/hooks``; ``POST /v1/host``, where the client
``plait-hook HOST EVENT`` forwards a command-hook host's hooks) find the host's wire and ask it
to read the call (``call``) and to write plait's answer in the host's own output shape
(``answer``); :func:`plait.adapters.hosts.http.answers.answer_call` is that corridor.
Only typing is imported at run time here: the client's process must stay small.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from plait.state.intents import HostAdapter, HostCall


@dataclass(frozen=True, kw_only=True, slots=True)
class HostWire:
    """How one host's calls come in and its answers go out.

    ``adapter``: the host as the hooks graph sees it; its ``rebuild`` takes the replay form
    ``{"event": ..., "payload": ...}`` (the form the client spools, too) and a call id.
    ``call(event, payload, call_id)``: the validated :class:`~plait.state.intents.HostCall`;
    raises ``UnknownHook`` for an event plait does not take, ``InvalidHookPayload`` naming the
    field for a payload it cannot use.
    ``answer(event, payload, output)``: the JSON the host reads (on the hook's stdout, or as
    the hook's mutated argument), from the call's payload and plait's ``HookOutput`` (``{}``
    when there is nothing to say).
    ``keep_events``: the events whose calls record something (installed with ``--keep``).
    """

    adapter: HostAdapter
    call: Callable[[str, Any, str], HostCall]
    answer: Callable[[str, Any, Mapping[str, Any]], Any]
    keep_events: frozenset[str]


CommandHost = HostWire  # a host that runs ``plait-hook`` as its hook command

__all__ = ["CommandHost", "HostWire"]
