"""The callers of plait, one folder a host: each turns its host's payloads into plait's intents."""
