"""What plait calls: each module implements ports of :mod:`plait.state.ports` for one server."""
