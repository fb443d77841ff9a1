"""A study's store: its rows (study_rows.py: the study, annotators, assignments), what
``study report`` reads (study_results.py), the shared dataset of its turns and its card
(study_export.py, study_dataset.py, study_card.py with study_card.md, study_share.py), and
the tables of ``study fidelity`` (fidelity.py, study_fidelity_card.py).

May import: core/, sessions/database and sessions/reading."""
