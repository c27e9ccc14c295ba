"""Long-term memory: graphiti-core on FalkorDB."""
