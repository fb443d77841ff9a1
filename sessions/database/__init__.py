"""The store itself: one SQLite file, its schema and migrations (schema.py, SCHEMA.md), the
connection and its short write transactions, the codecs between values and columns, ids, and
:class:`~convtui.sessions.database.store.Store` with the rows each write makes as it happens
(runs, sessions, turns, model calls and their attempts, executions, blobs, leases, a person's
typed feedback and times).

May import: core/ (the values it stores) and sqlite-utils; nothing else of sessions/, which
all builds on it."""
