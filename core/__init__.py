"""The pure library: tasks, code extraction, the executor, feedback, metrics.

Knows nothing of Textual, typer or SQLite (see docs/design.md#architecture)."""
