"""The app's process runs with its garbage collector settled (tui/heap.py): what is loaded
before the first frame is frozen out of the collector's walks, and the youngest generation
is collected less often. Each check runs in a new interpreter, for the test process settles
its own heap (tests/conftest.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

SETTLES = """
import gc, json
before = [gc.get_threshold(), gc.get_freeze_count()]
from convtui.tui.heap import YOUNGEST, settle_heap
settle_heap()
print(json.dumps([before, [gc.get_threshold(), gc.get_freeze_count()], YOUNGEST]))
"""

# run_tui with the app it makes stood in for by an object that, when run, notes the state of
# the collector the app would start in: the app itself needs a terminal.
STARTS_SETTLED = """
import gc, json
import convtui.tui.app
from convtui.tui import run_tui

class Observed:
    return_code = 0
    def run(self):
        self.state = [gc.get_threshold()[0], gc.get_freeze_count()]
    def farewell(self):
        return []

observed = Observed()
convtui.tui.make_app = lambda services, launch: observed
assert gc.get_freeze_count() == 0
run_tui(None, None)
print(json.dumps(observed.state))
"""


def _python(script: str) -> Any:
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_settling_freezes_what_is_loaded_and_collects_the_youngest_less_often() -> None:
    (threshold, frozen), (after, frozen_after), youngest = _python(SETTLES)
    assert frozen == 0 and frozen_after > 1000  # the imported modules' objects
    assert after == [youngest, *threshold[1:]] and youngest > threshold[0]


def test_the_app_starts_with_its_heap_settled() -> None:
    youngest, frozen = _python(STARTS_SETTLED)
    from convtui.tui.heap import YOUNGEST

    assert youngest == YOUNGEST and frozen > 1000
