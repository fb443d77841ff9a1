"""The bodies of ``convtui study``: init, status, token, add-annotator and reassign
(study_admin.py), export (study_export.py), report (study_report.py computes the
study_report_result.py it prints with study_report_views.py and draws with study_plots.py;
study_scores.py scores the replays) and fidelity (study_fidelity.py computes the
fidelity_result.py it prints with study_fidelity_views.py and draws with fidelity_plots.py).
A result type sits in a module of its own, so views and plots never import the body back."""
