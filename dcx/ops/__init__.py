"""Use cases: take a Workspace and typed values, return a Result. Never print, never exit."""
