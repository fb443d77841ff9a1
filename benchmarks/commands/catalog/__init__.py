"""The bodies of ``convtui tasks`` (tasks.py, its tables in task_views.py) and ``convtui
projects`` (projects.py: the DevEval archive; project_builds.py: the rebuilt projects)."""
