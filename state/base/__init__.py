"""The leaves every layer uses: errors, settings, the failure boundary and redaction.

They import nothing of plait above them, so the facade, graphs, nodes, state and adapters can all
use them without an import running back up.
"""
