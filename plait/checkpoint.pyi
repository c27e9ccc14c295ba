# The types of ``plait.checkpoint``, an alias of the Redis checkpoint savers (see plait/_moved.py).
from plait.adapters.backends.checkpoint import *  # noqa: F403
