"""Run orchestration: opening, playing and resuming runs (lifecycle.py) for the live, static
and CodeIF-Bench benchmarks, and the executions behind check and doctor. Nothing here prints;
the command bodies in benchmarks/commands/ do."""
