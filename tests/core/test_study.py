"""A study's spec, assignment and tokens (core/studies/spec.py): what a TOML file may say, that the
assignment is balanced, overlapped and reproducible, that a person who leaves is replaced by
someone who does not already have the task, and that a token matches only its own hash."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from convtui.core.studies.spec import (
    StudyError,
    StudySpec,
    TaskFilter,
    assign,
    assign_more,
    new_token,
    reassign,
    token_hash,
    token_matches,
)

GOOD = """
name = "pilot"
tasks = ["BigCodeBench/2", "BigCodeBench/3", "BigCodeBench/8"]
model = "http://127.0.0.1:8000/v1"
feedback = "CF,EF:partial,VF:expert"
turns = 3
protocol = "convtui"
user = "assist:expert"
simulator = "http://127.0.0.1:8001/v1"
annotators = ["ana", "ben", "cy"]
overlap = 2
seed = 7
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "study.toml"
    path.write_text(text)
    return path


def test_a_study_file_is_read_with_every_field(tmp_path: Path) -> None:
    spec = StudySpec.from_toml(write(tmp_path, GOOD))
    assert spec.tasks == ("BigCodeBench/2", "BigCodeBench/3", "BigCodeBench/8")
    assert (spec.model, spec.simulator, spec.user) == (
        "http://127.0.0.1:8000/v1",
        "http://127.0.0.1:8001/v1",
        "assist:expert",
    )
    assert (spec.feedback, spec.turns, spec.protocol) == ("CF,EF:partial,VF:expert", 3, "convtui")
    assert (spec.annotators, spec.overlap, spec.seed) == (("ana", "ben", "cy"), 2, 7)


def test_tasks_may_be_a_filter_table_and_defaults_fill_the_rest(tmp_path: Path) -> None:
    text = 'name = "s"\nmodel = "mock:x"\nannotators = ["a"]\n[tasks]\nids = "0-9"\nlib = "numpy"\n'
    spec = StudySpec.from_toml(write(tmp_path, text))
    assert spec.tasks == TaskFilter("bigcodebench", "0-9", ("numpy",), False)
    # A person gives the feedback, so convtui's protocol is the default (as for `session`).
    assert (spec.user, spec.protocol, spec.overlap, spec.turns) == ("human", "convtui", 1, 10)


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (("overlap = 2", "overlap = 4"), "but the study names 3: set overlap to at most 3"),
        (("overlap = 2", "overlap = 0"), "each task needs at least 1 annotator"),
        (('"cy"]', '"ana"]'), "named twice: ana"),
        (("seed = 7", "sead = 7"), "unknown key(s) sead"),
        (('protocol = "convtui"', 'protocol = "ccw"'), "'protocol' must be one of"),
        (('user = "assist:expert"', 'user = "novice"'), "'user' must be one of"),
        (("turns = 3", 'turns = "3"'), "'turns' must be an integer"),
        (('feedback = "CF,EF:partial,VF:expert"', 'feedback = "all"'), "one Ω, not all nine"),
        (('feedback = "CF,EF:partial,VF:expert"', 'feedback = "CF"'), "add VF to feedback"),
        (('user = "assist:expert"', 'user = "assist:novice"'), "says VF:expert: make them agree"),
        (('protocol = "convtui"', 'protocol = "convcodeworld"'), "use protocol convtui"),
        (('model = "http://127.0.0.1:8000/v1"\n', ""), "missing 'model'"),
        (("name = ", "name = ["), "not valid TOML"),
    ],
)
def test_a_bad_study_file_is_one_error_naming_the_file(tmp_path, change, said) -> None:
    path = write(tmp_path, GOOD.replace(*change))
    with pytest.raises(StudyError) as caught:
        StudySpec.from_toml(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and said in message
    assert "\n" not in message


def test_a_missing_study_file_says_so(tmp_path: Path) -> None:
    with pytest.raises(StudyError, match="no such study file"):
        StudySpec.from_toml(tmp_path / "absent.toml")


TASKS = [f"BigCodeBench/{n}" for n in range(6)]
PEOPLE = ["ana", "ben", "cy"]


@pytest.mark.parametrize(("tasks", "people", "k"), [(6, 3, 2), (7, 3, 2), (10, 4, 3), (5, 5, 1)])
def test_each_task_goes_to_k_different_annotators_with_loads_within_one(tasks, people, k):
    ids = [f"T/{n}" for n in range(tasks)]
    names = [f"p{n}" for n in range(people)]
    given = assign(ids, names, k, seed=3)
    assert len(given) == tasks * k
    by_task: dict[str, list[str]] = {}
    for a in given:
        by_task.setdefault(a.task_id, []).append(a.annotator)
    assert set(by_task) == set(ids)
    assert all(len(set(v)) == len(v) == k for v in by_task.values())
    loads = Counter(a.annotator for a in given)
    assert max(loads.values()) - min(loads.values()) <= 1
    assert set(loads) == set(names) or tasks * k < people
    # Each annotator's positions run 0, 1, 2, … with no gap.
    for name in names:
        positions = sorted(a.position for a in given if a.annotator == name)
        assert positions == list(range(len(positions)))


def test_the_same_seed_gives_the_same_assignment_and_another_seed_another() -> None:
    first = assign(TASKS, PEOPLE, 2, seed=11)
    assert assign(list(TASKS), list(PEOPLE), 2, seed=11) == first
    assert any(assign(TASKS, PEOPLE, 2, seed=s) != first for s in range(12, 20))


def test_someone_who_leaves_is_replaced_by_the_least_loaded_who_lacks_the_task() -> None:
    given = assign(TASKS, PEOPLE, 2, seed=5)
    leaving = "ben"
    theirs = [a for a in given if a.annotator == leaving]
    done = frozenset({theirs[0].task_id})
    moves = reassign(given, leaving, done, ["ana", "cy"])
    # The finished one stays theirs; each other goes to someone who did not have that task.
    assert [a for a, _ in moves] == sorted(theirs[1:], key=lambda a: a.position)
    for moved, to in moves:
        assert to != leaving
        assert not any(a.task_id == moved.task_id and a.annotator == to for a in given)


def test_reassigning_when_everyone_else_has_the_task_is_refused() -> None:
    given = assign(["T/1"], ["ana", "ben"], 2, seed=0)  # both have T/1
    with pytest.raises(StudyError, match="nobody can take T/1 from ana"):
        reassign(given, "ana", frozenset(), ["ben"])


def test_a_token_matches_only_its_own_hash_and_tokens_differ() -> None:
    token = new_token()
    assert len(token) >= 40 and new_token() != token
    stored = token_hash(token)
    assert stored != token and token_matches(token, stored)
    assert not token_matches(token + "x", stored)
    assert not token_matches(new_token(), stored)


def test_every_session_of_a_study_runs_under_the_config_its_spec_gives(tmp_path: Path) -> None:
    config = StudySpec.from_toml(write(tmp_path, GOOD)).config()
    assert (config.model, config.simulator, config.protocol) == (
        "http://127.0.0.1:8000/v1",
        "http://127.0.0.1:8001/v1",
        "convtui",
    )
    assert (config.feedback.label, config.max_turns) == ("CF,EF:partial,VF:expert", 4)
    human = StudySpec.from_toml(write(tmp_path, GOOD.replace("assist:expert", "human")))
    assert human.config().simulator == "http://127.0.0.1:8001/v1"  # unused, as in `session`


def test_a_late_annotator_gets_the_least_covered_tasks_they_lack() -> None:
    given = assign(TASKS, PEOPLE, 2, seed=5)
    # Two tasks lose one of their two annotators: those are the least covered now.
    thin = {TASKS[4], TASKS[1]}
    dropped = {min((a for a in given if a.task_id == t), key=lambda a: a.annotator) for t in thin}
    kept = [a for a in given if a not in dropped]
    more = assign_more(kept, "dee", 3, TASKS)
    assert [a.task_id for a in more[:2]] == [TASKS[1], TASKS[4]]  # ties in the study's order
    assert [(a.annotator, a.position) for a in more] == [("dee", 0), ("dee", 1), ("dee", 2)]
    assert assign_more(kept, "dee", 0, TASKS) == []
    # Someone who holds tasks already gets others, after their own last position.
    ana = assign_more(given, "ana", 2, TASKS)
    theirs = {a.task_id for a in given if a.annotator == "ana"}
    assert not theirs & {a.task_id for a in ana}
    assert [a.position for a in ana] == [len(theirs), len(theirs) + 1]
    with pytest.raises(StudyError, match="at most 2 more of the study's 6 tasks, not 3"):
        assign_more(given, "ana", 3, TASKS)
