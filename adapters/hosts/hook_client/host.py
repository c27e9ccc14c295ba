"""What a command-hook host's folder gives the service: :class:`CommandHost`.

The client (``plait-hook HOST EVENT``) only forwards; the service's ``POST /v1/host`` route
finds ``HOST`` among the command hosts it knows (``COMMAND_HOSTS`` in
:mod:`plait.adapters.hosts.http.host_routes`) and asks its :class:`CommandHost` to read the
call (``call``) and to write plait's answer in the host's own output shape (``answer``).
Only typing is imported at run time here: the client's process must stay small.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from plait.state.intents import HostAdapter, HostCall


@dataclass(frozen=True, kw_only=True, slots=True)
class CommandHost:
    """A host that runs ``plait-hook`` as its hook command.

    ``adapter``: the host as the hooks graph sees it; its ``rebuild`` takes the replay form
    ``{"event": ..., "payload": ...}`` (the form the client spools, too) and a call id.
    ``call(event, payload, call_id)``: the validated :class:`~plait.state.intents.HostCall`;
    raises ``UnknownHook`` for an event plait does not take, ``InvalidHookPayload`` naming the
    field for a payload it cannot use.
    ``answer(event, output)``: the JSON the host reads on the hook's stdout, from plait's
    ``HookOutput`` (``{}`` when there is nothing to say).
    ``keep_events``: the events whose calls record something (installed with ``--keep``).
    """

    adapter: HostAdapter
    call: Callable[[str, Any, str], HostCall]
    answer: Callable[[str, Mapping[str, Any]], dict[str, Any]]
    keep_events: frozenset[str]


__all__ = ["CommandHost"]
