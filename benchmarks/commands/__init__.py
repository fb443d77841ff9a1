"""The bodies of the commands that run headless: convtui/cli/ parses, these run and print.

- this folder: ``convtui check``, ``doctor``, ``bench live``, ``bench static``, ``bench
  codeif``, ``report`` and ``compare``, one module each, and what Ctrl+C in a bench command
  says (interrupted.py);
- catalog/: ``convtui tasks`` and ``convtui projects``;
- records/: ``convtui sessions`` (list, show, import, merge, export the store);
- study/: ``convtui study`` (init, status, token, add-annotator, reassign, export, report,
  fidelity).

``convtui session`` and ``convtui serve`` open the app: their bodies are the app's, in tui/."""
