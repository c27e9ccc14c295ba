"""Claude Code as a plait host: its command hooks (``hooks``) and its install (``install``)."""
