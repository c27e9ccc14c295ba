"""The OpenCode adapter: the TypeScript plugin (``plait.ts``) and its installer."""

from plait.adapters.hosts.opencode.install import (
    InstallReport,
    install_opencode,
    uninstall_opencode,
)

__all__ = ["InstallReport", "install_opencode", "uninstall_opencode"]
