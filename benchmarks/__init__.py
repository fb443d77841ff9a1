"""convtui.benchmarks: the headless front end (``convtui bench``, ``check``, ``doctor``,
``report``).

- commands/: one module per command: take the option groups, run, print;
- runs/: run orchestration: open, play and resume runs, and the checks behind check/doctor;
- reports/: the tables, files and figures ``convtui report`` builds from a store;
- output.py, settings.py, views.py: printing, option groups and rich tables the commands
  share; perf/: measurement scripts, run by hand.
"""
