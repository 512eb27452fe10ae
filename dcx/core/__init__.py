"""Leaf mechanisms owned by nobody; they import nothing of dcx but each other (docs/architecture.md)."""
