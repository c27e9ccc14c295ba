"""The web viewer: what memory holds, why the model saw it, and a person's corrections.

Served by ``plait serve`` on loopback under ``/ui`` and opened by ``plait ui``, which asks the
service (with its bearer token) for a one-time login link. Pages: sessions and a session's
timeline with the envelope its next model call gets; observations with search, filters,
revisions, supersession chains, edit and forget; health with dead letters to replay or drop.
It reads and changes memory only through :class:`plait.Memory` and its public parts.
"""

from plait.adapters.hosts.viewer.app import CSP, PREFIX, viewer_app
from plait.adapters.hosts.viewer.auth import ViewerAuth

__all__ = ["CSP", "PREFIX", "ViewerAuth", "viewer_app"]
