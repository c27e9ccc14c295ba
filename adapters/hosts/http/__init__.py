"""plait's local HTTP service: OpenCode's plugin (or anything that speaks HTTP) posts hooks here."""

from plait.adapters.hosts.http import service
from plait.adapters.hosts.http.service import *  # noqa: F403 (the service's public names)

__all__ = service.__all__
