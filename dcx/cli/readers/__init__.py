"""Text views of the read-only commands (log, show, verify, sources), importable without typer."""
