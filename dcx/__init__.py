"""dcx — the Decision Context CLI."""

__version__ = "0.1.0"
