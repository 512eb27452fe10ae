"""The incremental source plane: the port, the registry, the local-file adapter."""
