"""The outside world, in two kinds.

``plait.adapters.hosts``: the callers of plait (OpenCode, LangChain/LangGraph, HTTP, MCP), one
folder a host; they translate a host's payloads into plait's intents and use the facade.
``plait.adapters.backends``: what plait calls (Redis, the embedded server, the checkpointer,
Graphiti, the corpus); they implement the ports of :mod:`plait.state.ports` and never import the
facade.
"""
