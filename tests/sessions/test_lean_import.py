"""Opening a store does not load pandas or numpy (sessions/database/lean_sqlite_utils.py): a served
study runs one app per annotator, and each would carry them. Checked in a fresh interpreter,
since this one has imported them long ago; and sqlite-utils still writes and reads rows."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PROBE = """
import sys
from convtui.sessions import Store
with Store.open(sys.argv[1]) as store:
    store.db["probe"].insert({"n": 1, "x": 0.5})
    assert list(store.db["probe"].rows) == [{"n": 1, "x": 0.5}]
print(sorted(name for name in ("pandas", "numpy") if name in sys.modules))
import pandas  # still importable afterwards, by whatever needs it
print(pandas.__name__)
"""


def test_a_store_opens_without_pandas_or_numpy(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(tmp_path / "s.db")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["[]", "pandas"]
