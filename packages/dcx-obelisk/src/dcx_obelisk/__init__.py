"""dcx-obelisk: recall visible turns of one past Codex session through Obelisk's read-only CLI."""

__version__ = "0.1.0"
