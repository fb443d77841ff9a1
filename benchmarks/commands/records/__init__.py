"""The bodies of ``convtui sessions``: list, show and export (sessions.py, what an export
wrote in export_result.py, the tables and transcripts in session_views.py), import
(imports.py) and merge (merge.py)."""
