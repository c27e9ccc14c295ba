"""Gemini CLI: command hooks from an extension, its install and doctor checks."""
