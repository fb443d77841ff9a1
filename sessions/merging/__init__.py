"""Merging stores: ``sessions merge`` (merge.py) with its checks, limits and undo
(merge_checks.py, merge_limits.py, merge_source.py, merge_undo.py), the study and fidelity
rows it carries over (merge_study.py, merge_fidelity.py), and copying sessions from one store
into another under the same ids (copying.py, which ``bench static`` uses too).

May import: core/ and sessions/database."""
