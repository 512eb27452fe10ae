"""Evidence: the use cases' shared rules above the planes (docs/architecture.md)."""
