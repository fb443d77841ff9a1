"""Which shard a free slot takes next (core/execution/placement.py): heavy libraries imported
by as few slots as the batch allows, the batch's order kept otherwise, and no shard left
behind. Pure logic; the executor's use of it is tested in test_executor.py."""

from __future__ import annotations

from convtui.core.execution.placement import IMPORT_S, Placement

SCIPY = frozenset({"scipy"})
SKLEARN = frozenset({"sklearn"})
NONE: frozenset[str] = frozenset()


def placement(needs: list[frozenset[str]], expected_s: dict[int, float] | None = None):
    return Placement([(i, None) for i in range(len(needs))], needs, expected_s or {})


def test_a_slot_that_holds_a_library_takes_the_tasks_that_need_it_first():
    batch = placement([NONE, SCIPY, NONE, SCIPY])
    batch.join(0, SCIPY)
    batch.join(1, NONE)
    assert batch.take(0) == (1, None)  # ahead of the plain task before it
    assert batch.take(1) == (0, None)  # the plain one: scipy is held elsewhere
    assert batch.take(0) == (3, None)
    assert batch.take(1) == (2, None)
    assert batch.take(0) is None and batch.take(1) is None


def test_a_library_is_held_from_the_moment_its_task_is_taken():
    # Two slots starting together: the second must not take on scipy while the first's run
    # (which imports it) is still going.
    batch = placement([SCIPY, SCIPY, NONE])
    batch.join(0, NONE)
    batch.join(1, NONE)
    assert batch.take(0) == (0, None)
    assert batch.take(1) == (2, None)
    assert batch.take(0) == (1, None)


def test_a_slot_imports_a_library_held_elsewhere_only_for_enough_work():
    little = placement([SCIPY, SCIPY])
    little.join(0, SCIPY)
    little.join(1, NONE)
    assert little.take(1) is None  # one raising run or two: not worth a second import

    much = placement([SCIPY, SCIPY], expected_s={0: IMPORT_S, 1: IMPORT_S})
    much.join(0, SCIPY)
    much.join(1, NONE)
    assert much.take(1) == (0, None)


def test_a_split_tasks_shards_share_its_time_when_weighing_an_import():
    # One task of 0.8 s cut into two shards is 0.8 s of work, not 1.6 s: less than an import,
    # so the slot without scipy leaves both to the one that holds it.
    halves = Placement([(0, ("a",)), (0, ("b",))], [SCIPY], {0: 0.8 * IMPORT_S})
    halves.join(0, SCIPY)
    halves.join(1, NONE)
    assert halves.take(1) is None
    assert [halves.take(0), halves.take(0)] == [(0, ("a",)), (0, ("b",))]

    longer = Placement([(0, ("a",)), (0, ("b",))], [SCIPY], {0: 2.4 * IMPORT_S})
    longer.join(0, SCIPY)
    longer.join(1, NONE)
    assert longer.take(1) == (0, ("a",))


def test_a_slot_holding_nothing_takes_the_first_plain_task_even_after_heavy_ones_elsewhere():
    batch = placement([SCIPY, NONE, SCIPY, NONE])
    batch.join(0, SCIPY)
    batch.join(1, NONE)
    assert batch.take(1) == (1, None)
    assert batch.take(1) == (3, None)
    assert batch.take(1) is None


def test_a_task_no_present_slot_holds_whole_is_taken_rather_than_left():
    batch = placement([SCIPY | SKLEARN])
    batch.join(0, SCIPY)
    batch.join(1, SKLEARN)
    assert batch.take(1) == (0, None)


def test_what_a_slot_that_left_holds_keeps_nothing_from_the_others():
    batch = placement([SCIPY, SCIPY])
    batch.join(0, SCIPY)
    batch.join(1, NONE)
    assert batch.take(1) is None
    batch.leave(0)
    assert batch.take(1) == (0, None)


def test_plain_tasks_keep_the_batch_order():
    batch = placement([NONE, NONE, NONE])
    batch.join(0, NONE)
    assert [batch.take(0), batch.take(0), batch.take(0)] == [(0, None), (1, None), (2, None)]
    assert batch.take(0) is None
