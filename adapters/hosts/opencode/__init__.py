"""The OpenCode adapter: the TypeScript plugin (``plait.ts``) and its installer."""

from plait.adapters.hosts.opencode.install import install_opencode

__all__ = ["install_opencode"]
