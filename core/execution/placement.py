"""Which shard of a batch a free slot takes next, so that a heavy library is imported by as few
slots as the batch allows.

A full zygote imports scikit-learn, SciPy, seaborn or statsmodels the first time a task names
them (executor.py, ``ON_DEMAND_ROOTS``): one to two seconds of a core each. Played in the
batch's order, every slot ends up importing every heavy library the batch names; taken by
affinity, a slot that holds a library runs the tasks that need it, the others run the rest,
and the import happens once (the pandas subset of ../shared/perf names four such libraries in
22 of its 60 tasks)."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Collection, Mapping, Sequence

from convtui.core.execution.batch import Shard

# What importing a heavy library costs a slot, in seconds of the work it would save a slot that
# already holds it: a slot imports a library another one holds only for more work than this.
IMPORT_S = 1.0
# Expected run time of a shard whose duration is unknown: a raising run's.
_UNKNOWN_S = 0.05


class Placement:
    """The pending shards of one batch, handed out one at a time from any thread.

    ``needs[i]`` are the heavy libraries request ``i`` makes a slot import; ``expected_s``
    the run times known per request, shared evenly by a split request's shards. A slot's
    worker ``join``s with what the slot holds from earlier batches and ``leave``s when it is
    done; only the slots present count. A slot holds a library from the moment it takes a
    shard that needs it (the run imports it), so two slots starting at once do not both take
    one on. A slot that asks (``take``) gets, in the batch's order:

    1. a shard that needs libraries and only ones it holds;
    2. else one it can run without importing a library another slot holds (needing nothing,
       or only libraries no slot holds yet);
    3. else one that needs a library held elsewhere, when the work waiting for such
       libraries is worth an import (``IMPORT_S``) or no other slot holds all it needs;
    4. else nothing: the slots that hold them will run the rest.

    The libraries a slot holds change only through the one worker bound to it for the batch,
    so a worker told "nothing" has none of its own first choices left and never will: it may
    leave, and every shard still waiting is the first choice of a slot still present.
    """

    def __init__(
        self,
        shards: Sequence[Shard],
        needs: Sequence[frozenset[str]],
        expected_s: Mapping[int, float],
    ) -> None:
        self._pending = list(shards)
        self._needs = needs
        self._expected_s = expected_s
        self._pieces = Counter(index for index, _ in shards)
        self._held: dict[int, frozenset[str]] = {}
        self._lock = threading.Lock()

    def join(self, slot: int, held: Collection[str]) -> None:
        """``slot`` takes part, holding ``held``."""
        with self._lock:
            self._held[slot] = frozenset(held)

    def leave(self, slot: int) -> None:
        """``slot`` takes no more shards: what it holds no longer keeps any from others."""
        with self._lock:
            self._held.pop(slot, None)

    def take(self, slot: int) -> Shard | None:
        """The next shard for ``slot``; None when there is none for it."""
        with self._lock:
            mine = self._held.get(slot, frozenset())
            others = [libs for k, libs in self._held.items() if k != slot]
            position = self._choose(mine, others)
            if position is None:
                return None
            shard = self._pending.pop(position)
            self._held[slot] = mine | self._needs[shard[0]]
            return shard

    def _choose(self, mine: frozenset[str], others: list[frozenset[str]]) -> int | None:
        held_elsewhere = frozenset().union(*others)
        free_choice: int | None = None
        elsewhere: list[int] = []  # shards needing a library another slot holds, this one not
        for position, (index, _) in enumerate(self._pending):
            needs = self._needs[index]
            if needs and needs <= mine:
                return position
            if (needs - mine) & held_elsewhere:
                elsewhere.append(position)
            elif free_choice is None:
                free_choice = position
                if not mine:  # nothing can be a first choice (1.): the rest cannot change it
                    break
        if free_choice is not None or not elsewhere:
            return free_choice
        first = elsewhere[0]
        # A slot that holds all it needs takes it as its own first choice, and stays in the
        # batch while such a shard waits; when none holds all of it, someone must import.
        placeable = any(self._needs[self._pending[first][0]] <= held for held in others)
        work = sum(self._shard_s(self._pending[p][0]) for p in elsewhere)
        return first if work > IMPORT_S or not placeable else None

    def _shard_s(self, index: int) -> float:
        if index not in self._expected_s:
            return _UNKNOWN_S
        return self._expected_s[index] / self._pieces[index]
