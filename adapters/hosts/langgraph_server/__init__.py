"""LangGraph Server as a host: plait's graphs under ``langgraph dev`` / ``langgraph up``.

``langgraph.json`` names the graphs of :mod:`.graphs`: the same four graphs, whose run context
is built from plait's settings when the server gives none (or only a ``project_dir`` /
``data_dir``), and whose ``/schemas`` answer. The hooks and compaction graphs read their
payload as JSON intents (:mod:`.intents`).
"""
