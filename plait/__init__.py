"""plait: a memory layer for AI coding agents."""
