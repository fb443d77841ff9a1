"""sqlite-utils without pandas and numpy. At its own import sqlite-utils imports both when
they are installed, only to map their scalar types to column types; the store creates its
tables from its own schema and never writes their values. Every process that opens a store
would otherwise carry them: in a served study that is each annotator's app, about 100 MB
and a third of a second of start-up apiece. Imported first by :mod:`convtui.sessions`."""

from __future__ import annotations

import sys

# The modules sqlite-utils tries at import time (sqlite_utils/db.py).
HIDDEN = ("pandas", "numpy")


def import_without_dataframes() -> None:
    """Import sqlite-utils with pandas and numpy looking absent, unless something in this
    process has already imported them (then sqlite-utils sees them, as it always has)."""
    if "sqlite_utils.db" in sys.modules:
        return
    hidden = [name for name in HIDDEN if name not in sys.modules]
    for name in hidden:
        sys.modules[name] = None  # type: ignore[assignment]  # import raises ImportError
    try:
        import sqlite_utils.db  # noqa: F401
    finally:
        for name in hidden:
            if sys.modules.get(name) is None:
                del sys.modules[name]


import_without_dataframes()
