"""Who a root session belongs to, on a service a team shares.

A session's short-term memory holds what was said in it, a member's preferences included, so
only whoever started it may read or write it. Its first call binds the root session to the
identity making it (:meth:`~plait.state.ports.SessionLinks.claim_session`, in the hot tier, so
every replica agrees): a team member's user, or :data:`SERVICE_OWNER` for the service's own
token and for a process with no service. A member's call into a session bound to anyone else
raises :class:`~plait.NotYourSession` (403 over HTTP). The owner's token may enter any session:
it is the one that runs the service and sees everything in its viewer.

A binding never changes while its session lives, so each process remembers the ones it has
seen and asks the hot tier again only after :data:`CHECK_AGAIN_S` (the claim renews the
binding's TTL with the session's).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable

from plait.state.base.errors import NotYourSession
from plait.state.groups import acting_member
from plait.state.ports import SessionLinks

SERVICE_OWNER = ""  # a member's user is never empty (``TokenRecord.user``)
CHECK_AGAIN_S = 600.0
MAX_KNOWN = 4096


class SessionOwners:
    """The owners of root sessions, as this process last heard them from the hot tier."""

    def __init__(self, links: SessionLinks, clock: Callable[[], float] = time.monotonic) -> None:
        """Ask ``links`` (the hot store) for bindings; ``clock`` says when to ask again."""
        self.links = links
        self.clock = clock
        self._known: OrderedDict[str, tuple[str, float]] = OrderedDict()

    def known_mine(self, root_session_id: str) -> bool:
        """Whether the session is known here, without asking, to be the acting identity's own.

        The service owner's calls own the sessions bound to :data:`SERVICE_OWNER`; where news
        that names no session goes (:meth:`plait.dispatch.Dispatch`), not who may enter.
        """
        member = acting_member()
        found = self._known.get(root_session_id)
        return found is not None and found[0] == (SERVICE_OWNER if member is None else member)

    async def admit(self, root_session_id: str) -> None:
        """Bind the session to the acting identity if it is new; refuse another member's.

        Raises :class:`~plait.NotYourSession` for a member's call into a session bound to
        someone else, and what the hot tier raises when it cannot answer.
        """
        member = acting_member()
        owner = await self._owner(root_session_id, SERVICE_OWNER if member is None else member)
        if member is not None and owner != member:
            raise NotYourSession(root_session_id)

    async def _owner(self, root_session_id: str, claimant: str) -> str:
        now = self.clock()
        found = self._known.get(root_session_id)
        if found is not None and now - found[1] < CHECK_AGAIN_S:
            return found[0]
        owner = await self.links.claim_session(root_session_id, claimant)
        self._known.pop(root_session_id, None)
        self._known[root_session_id] = (owner, now)
        while len(self._known) > MAX_KNOWN:
            self._known.popitem(last=False)
        return owner


__all__ = ["CHECK_AGAIN_S", "SERVICE_OWNER", "SessionOwners"]
