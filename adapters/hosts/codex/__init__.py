"""Codex: command hooks, install, doctor checks and past sessions."""
