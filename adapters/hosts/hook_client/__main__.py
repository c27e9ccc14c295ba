"""``python -m plait.adapters.hosts.hook_client HOST EVENT [--keep]``: as ``plait-hook``."""

from plait.adapters.hosts.hook_client._client import main

main()
