"""The bodies of the commands that are neither front end's: ``convtui tasks`` (the catalog)
and ``convtui sessions`` (browse, import, export the store). convtui/cli/ imports them lazily."""
