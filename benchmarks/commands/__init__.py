"""The bodies of the headless commands (``convtui check``, ``doctor``, ``bench live``,
``bench static``, ``bench codeif``, ``report``): convtui/cli/ parses, these run and print."""
