"""The garbage collector's settings for the app's process, which lives long and makes many
short-lived objects: Textual builds styles, segments and strips for every frame it draws.

By default Python's collector runs its youngest generation every 700 new objects and, every
hundred of those, walks every object the process holds, the imported modules (Textual, rich,
the catalog's tasks) included, although they live as long as the process. Frozen, they are
out of its walk; collected less often, the frames' objects mostly die before it runs. The
app's Pilot tests, which draw the same frames, spent 13 to 17 % less CPU so (user time of
``pytest -n 0`` over tests/tui/test_session_pilot.py and test_snapshots.py: 34.5 s against
41.6 s, the settings' effect measured side by side in one sitting)."""

from __future__ import annotations

import gc

# New objects between two collections of the youngest generation (Python's default: 700).
YOUNGEST = 10_000


def settle_heap() -> None:
    """Freeze what the process holds now out of the collector's walks and collect the
    youngest generation less often; called once everything that lives as long as the
    process is loaded, before the app's first frame."""
    gc.collect()
    gc.freeze()
    _, middle, oldest = gc.get_threshold()
    gc.set_threshold(YOUNGEST, middle, oldest)
