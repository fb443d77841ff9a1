"""The bodies of the commands that are neither front end's: ``convtui tasks`` (the catalog)
and ``convtui sessions`` (browse, import, export the store). cli.py imports them lazily."""
