"""Text views of the read-only commands (log, show, verify, sources) and of scan, importable without typer."""
