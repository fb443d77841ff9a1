"""The dataclass codec and the row ids."""

from __future__ import annotations

import multiprocessing
import os
from dataclasses import replace

from store_values import config, result

from convtui.core.execution.types import Limits
from convtui.core.models.types import ChatMessage, GenerationParams
from convtui.core.settings.omega import FeedbackConfig
from convtui.sessions.database import codec
from convtui.sessions.database.ids import new_id, utc_after, utc_now


def test_a_session_config_round_trips_through_json() -> None:
    cfg = replace(
        config(FeedbackConfig("partial", "expert"), simulator="openai:gpt-4o"),
        context="full",
        partial_rule="first-tests",
        simulator_params=GenerationParams(0.7, 64, (), None),
        limits=Limits(per_test_s=1.5, memory_mb=512),
    )

    assert codec.config_from_json(codec.config_to_json(cfg)) == cfg


def test_decoding_ignores_unknown_keys_and_defaults_missing_ones() -> None:
    text = '{"model": "m", "max_turns": 4, "from_the_future": 1, "params": {"seed": 3, "x": 0}}'

    decoded = codec.config_from_json(text)

    assert decoded.model == "m" and decoded.max_turns == 4
    assert decoded.params == GenerationParams(seed=3)
    assert decoded.limits == Limits()


def test_messages_are_stored_as_references_to_their_texts() -> None:
    messages = (ChatMessage("system", "s"), ChatMessage("user", "u"), ChatMessage("user", "u"))

    refs, texts = codec.messages_to_refs(messages)

    assert len(texts) == 2
    assert codec.messages_from_refs(refs, texts) == messages


def test_the_result_hash_sees_every_field() -> None:
    base = result("fail")
    tests = (*base.tests[:1], replace(base.tests[1], traceback="other"))

    assert codec.result_hash(base) == codec.result_hash(result("fail"))
    assert codec.result_hash(base) != codec.result_hash(replace(base, tests=tests))
    assert codec.result_hash(base) != codec.result_hash(replace(base, duration_s=0.2))


def test_ids_are_unique_sortable_and_increasing() -> None:
    ids = [new_id() for _ in range(5000)]

    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    assert all(len(i) == 26 and i == i.lower() for i in ids)


def test_ids_made_in_one_burst_differ_within_their_first_12_characters() -> None:
    # A benchmark plans thousands of sessions within a few milliseconds; a listing shows
    # their first 12 characters at most, so those must tell them apart.
    ids = [new_id() for _ in range(5000)]

    assert len({i[:12] for i in ids}) == len(ids)


def _child_ids(queue: multiprocessing.Queue) -> None:
    queue.put([new_id() for _ in range(100)])


def test_a_forked_child_does_not_repeat_its_parents_ids() -> None:
    if "fork" not in multiprocessing.get_all_start_methods() or os.name != "posix":
        return
    new_id()  # the parent has state to inherit
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=_child_ids, args=(queue,))
    child.start()
    theirs = queue.get(timeout=30)
    child.join()
    ours = [new_id() for _ in range(100)]

    assert not set(theirs) & set(ours)


def test_timestamps_sort_as_text() -> None:
    assert utc_after(-1) < utc_now() < utc_after(1)
    assert len(utc_now()) == len("2026-01-01T00:00:00.000000Z")
