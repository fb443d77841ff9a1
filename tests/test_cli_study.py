"""`convtui study init|status|token|add-annotator|reassign` as an organiser meets them: the
command line (in process) over a real SQLite file made from a study file in tmp_path, and
the BigCodeBench catalog (no model or executor: sessions are opened through the store).

A study of 6 tasks, 3 annotators, each task to 2 of them: 12 assignments, 4 each."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest
from support.cli import assert_one_line_error, convtui
from support.data import needs_bigcodebench

from convtui.core.studies.spec import token_hash
from convtui.sessions import Store
from convtui.sessions.studies.study_rows import (
    assignments,
    load_study,
    next_assignment,
    start_assignment,
    who_holds,
)

pytestmark = needs_bigcodebench

TASKS = ["BigCodeBench/2", "BigCodeBench/3", "BigCodeBench/8", "13", "BigCodeBench/16", "19"]
STUDY = f"""
name = "pilot"
tasks = {json.dumps(TASKS)}
model = "mock:replies.jsonl"
feedback = "CF,EF:full,VF:novice"
turns = 2
annotators = ["ana", "ben", "cy"]
overlap = 2
seed = 1
"""
PEOPLE = ("ana", "ben", "cy")


def study_file(tmp_path: Path, text: str = STUDY) -> Path:
    path = tmp_path / "STUDY.toml"
    path.write_text(text)
    return path


def init(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A study made with --json: its database and each annotator's token."""
    db = tmp_path / "study.db"
    done = convtui("study", "init", str(study_file(tmp_path)), "--db", str(db), "--json")
    assert done.returncode == 0, done.stderr
    made = json.loads(done.stdout)
    return db, {p["name"]: p["token"] for p in made["annotators"]}


def status(db: Path) -> dict:
    done = convtui("study", "status", "--db", str(db), "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_init_deals_12_assignments_4_each_and_prints_each_token_once(tmp_path: Path) -> None:
    db = tmp_path / "study.db"
    done = convtui("study", "init", str(study_file(tmp_path)), "--db", str(db), columns=120)
    assert done.returncode == 0, done.stderr
    assert "6 tasks, 3 annotators, each task to 2 of them (12 assignments)" in done.stdout
    assert "shown only now" in done.stdout and "convtui study token NAME" in done.stdout
    tokens = re.findall(r"[A-Za-z0-9_-]{43}", done.stdout)
    assert len(tokens) == len(set(tokens)) == 3  # each printed whole, once
    with Store.open(db) as store:
        study = load_study(store)
        given = assignments(store, study.id)
        assert len(given) == 12
        assert Counter(a.annotator for a in given) == {"ana": 4, "ben": 4, "cy": 4}
        by_task = Counter(a.task_id for a in given)
        assert set(by_task) == {f"BigCodeBench/{n}" for n in (2, 3, 8, 13, 16, 19)}
        assert set(by_task.values()) == {2}
        # Each printed token opens its own annotator; the file holds only their hashes.
        holders = {who_holds(store, study.id, t) for t in tokens}
        assert holders == set(PEOPLE)
        for person in PEOPLE:
            row = next(line for line in done.stdout.splitlines() if f" {person} " in line)
            (token,) = [t for t in tokens if t in row]
            assert who_holds(store, study.id, token) == person
        with store.reading() as conn:
            dump = "\n".join(conn.conn.iterdump())
        assert not any(t in dump for t in tokens)
        assert all(token_hash(t) in dump for t in tokens)
        # The study's sessions run under the spec's own config.
        assert (study.config.model, study.config.feedback.label) == (
            "mock:replies.jsonl",
            "CF,EF:full,VF:novice",
        )
        assert (study.config.max_turns, study.config.protocol) == (3, "convtui")


def test_status_follows_the_sessions_of_the_assignments(tmp_path: Path) -> None:
    db, _tokens = init(tmp_path)
    before = status(db)
    assert (before["done"], before["assignments"]) == (0, 12)
    assert [(a["name"], a["assigned"], a["pending"]) for a in before["annotators"]] == [
        ("ana", 4, 4),
        ("ben", 4, 4),
        ("cy", 4, 4),
    ]
    with Store.open(db) as store:
        study = load_study(store)
        for person in PEOPLE:  # everyone finishes their first; ana starts her second
            for n in range(2 if person == "ana" else 1):
                nxt = next_assignment(store, study.id, person)
                assert nxt is not None
                session = start_assignment(
                    store, study.id, nxt.task_id, person, study.config, "human"
                )
                if n == 0:
                    store.set_session_status(session, "solved" if person != "cy" else "abandoned")
    after = status(db)
    assert (after["done"], after["assignments"]) == (3, 12)
    ana = after["annotators"][0]
    assert (ana["done"], ana["started"], ana["pending"], ana["reassigned"]) == (1, 1, 2, 0)
    statuses = Counter(
        p["session_status"] for t in after["tasks"] for p in t["annotators"] if p["session_status"]
    )
    assert statuses == {"solved": 2, "abandoned": 1, "planned": 1}
    assert sum(t["done"] for t in after["tasks"]) == 3
    shown = convtui("study", "status", "--db", str(db), columns=120)
    assert shown.returncode == 0, shown.stderr
    assert "3/12 assignments done" in shown.stdout
    assert "per annotator" in shown.stdout and "per task" in shown.stdout


def test_one_of_each_is_counted_in_the_singular(tmp_path: Path) -> None:
    """ "1 tasks, 1 annotators … (1 assignments)" read wrong: one of a thing is singular."""
    text = (
        STUDY.replace(json.dumps(TASKS), '["BigCodeBench/2"]')
        .replace('["ana", "ben", "cy"]', '["ana"]')
        .replace("overlap = 2", "overlap = 1")
    )
    db = tmp_path / "study.db"
    made = convtui("study", "init", str(study_file(tmp_path, text)), "--db", str(db), columns=120)
    assert made.returncode == 0, made.stderr
    assert "1 task, 1 annotator, each task to 1 of them (1 assignment)." in made.stdout
    joined = convtui("study", "add-annotator", "ben", "--tasks", "1", "--db", str(db))
    assert joined.returncode == 0, joined.stderr
    assert "ben joins study 'pilot' with 1 assignment." in joined.stdout


def test_status_lists_the_tasks_in_the_study_files_order(tmp_path: Path) -> None:
    """The file lists 2, 3, 8, 13, 16, 19 (two of them by number alone); the dealing shuffles
    them, and status shows them as the file has them, as text and as JSON."""
    db, _tokens = init(tmp_path)
    in_file = [f"BigCodeBench/{n}" for n in (2, 3, 8, 13, 16, 19)]
    assert [t["task_id"] for t in status(db)["tasks"]] == in_file
    shown = convtui("study", "status", "--db", str(db), columns=120).stdout
    assert sorted(in_file, key=shown.index) == in_file
    # A filter lists them in the catalog's order: by number, not as strings (10 after 9).
    other = tmp_path / "filter"
    other.mkdir()
    text = STUDY.replace(f"tasks = {json.dumps(TASKS)}\n", "") + '[tasks]\nids = "0-11"\n'
    made = convtui("study", "init", str(study_file(other, text)), "--db", str(other / "s.db"))
    assert made.returncode == 0, made.stderr
    shown_ids = [t["task_id"] for t in status(other / "s.db")["tasks"]]
    assert shown_ids == [f"BigCodeBench/{n}" for n in range(12)]


def test_a_new_token_replaces_the_old_one(tmp_path: Path) -> None:
    db, tokens = init(tmp_path)
    done = convtui("study", "token", "ben", "--db", str(db))
    assert done.returncode == 0, done.stderr
    (fresh,) = re.findall(r"^[A-Za-z0-9_-]{43}$", done.stdout, re.MULTILINE)
    assert "the old one no longer works" in done.stdout
    with Store.open(db) as store:
        study = load_study(store)
        assert who_holds(store, study.id, tokens["ben"]) is None
        assert who_holds(store, study.id, fresh) == "ben"
        assert who_holds(store, study.id, tokens["ana"]) == "ana"


def test_a_late_annotator_gets_the_least_covered_tasks(tmp_path: Path) -> None:
    db, _tokens = init(tmp_path)
    done = convtui("study", "add-annotator", "dee", "--tasks", "3", "--db", str(db), "--json")
    assert done.returncode == 0, done.stderr
    added = json.loads(done.stdout)
    assert len(added["tasks"]) == len(set(added["tasks"])) == 3
    with Store.open(db) as store:
        study = load_study(store)
        assert who_holds(store, study.id, added["token"]) == "dee"
        mine = assignments(store, study.id, "dee")
        assert [(a.task_id, a.position) for a in mine] == [
            (t, i) for i, t in enumerate(added["tasks"])
        ]
    after = status(db)
    assert after["assignments"] == 15
    # Every task had 2; the 3 given went to 3 different tasks, so coverage is 2 or 3.
    assert sorted(len(t["annotators"]) for t in after["tasks"]) == [2, 2, 2, 3, 3, 3]
    # With no --tasks they join with none, and get a token all the same.
    bare = convtui("study", "add-annotator", "eve", "--db", str(db), "--json")
    assert bare.returncode == 0, bare.stderr
    assert json.loads(bare.stdout)["tasks"] == []


def test_someone_who_leaves_hands_on_what_they_had_not_finished(tmp_path: Path) -> None:
    db, tokens = init(tmp_path)
    with Store.open(db) as store:
        study = load_study(store)
        first = next_assignment(store, study.id, "ben")
        assert first is not None
        session = start_assignment(store, study.id, first.task_id, "ben", study.config, "human")
        store.set_session_status(session, "solved")
    done = convtui("study", "reassign", "ben", "--db", str(db), "--json")
    assert done.returncode == 0, done.stderr
    moved = json.loads(done.stdout)
    assert moved["kept_done"] == [first.task_id]
    assert len(moved["moves"]) == 3 and {m["to"] for m in moved["moves"]} <= {"ana", "cy"}
    after = status(db)
    assert (after["done"], after["assignments"]) == (1, 12)
    ben = next(a for a in after["annotators"] if a["name"] == "ben")
    assert (ben["active"], ben["done"], ben["reassigned"]) == (False, 1, 3)
    for task in after["tasks"]:  # still two different people on each task
        names = [p["name"] for p in task["annotators"]]
        assert len(names) == len(set(names)) == 2
    with Store.open(db) as store:
        assert who_holds(store, load_study(store).id, tokens["ben"]) is None
    # With ana alone left, cy's tasks that ana has can go to nobody: refused, nothing moved.
    alone = convtui("study", "reassign", "cy", "--db", str(db))
    assert_one_line_error(alone, "nobody can take", "from cy")
    assert status(db)["annotators"][2]["active"] is True
    assert convtui("study", "add-annotator", "dee", "--db", str(db)).returncode == 0
    shown = convtui("study", "reassign", "cy", "--db", str(db), columns=120)
    assert shown.returncode == 0, shown.stderr
    assert "cy left study 'pilot'" in shown.stdout and "now with" in shown.stdout


BAD_FILES = [
    (
        STUDY.replace('"BigCodeBench/8"', '"BigCodeBench/99999"'),
        "unknown task 'BigCodeBench/99999'",
    ),
    (
        STUDY.replace('"BigCodeBench/8", "13"', '"BigCodeBench/99998", "CodeIF/9999"'),
        "unknown tasks",
    ),
    (STUDY.replace("overlap = 2", "overlap = 4"), "set overlap to at most 3"),
    (STUDY.replace("name = ", "name = ["), "not valid TOML"),
    (STUDY.replace("turns = 2", 'protocol = "convcodeworld"'), "use protocol convtui"),
    # A [tasks] table written first takes every key after it: the file does name a model.
    (
        '[tasks]\nids = "0-5"\n' + STUDY.replace(f"tasks = {json.dumps(TASKS)}\n", ""),
        "'annotators', 'feedback', 'model', 'name', 'overlap', 'seed', 'turns' sit inside the "
        "[tasks] table, which takes every key after its header: move [tasks] and its keys to "
        "the end of the file",
    ),
]


@pytest.mark.parametrize(("text", "said"), BAD_FILES)
def test_a_bad_study_file_is_one_line_and_leaves_no_database(tmp_path, text, said) -> None:
    db = tmp_path / "study.db"
    path = study_file(tmp_path, text)
    done = convtui("study", "init", str(path), "--db", str(db))
    assert_one_line_error(done, said, str(path))
    assert not db.exists() and list(tmp_path.iterdir()) == [path]


def test_init_refuses_a_missing_file_a_second_study_and_a_file_not_sqlite(tmp_path) -> None:
    db = tmp_path / "study.db"
    missing = convtui("study", "init", str(tmp_path / "absent.toml"), "--db", str(db))
    assert_one_line_error(missing, "no such study file")
    assert not db.exists()
    db, _tokens = init(tmp_path)
    again = convtui("study", "init", str(study_file(tmp_path)), "--db", str(db))
    assert_one_line_error(again, "already holds study 'pilot'")
    assert status(db)["assignments"] == 12  # the first study is untouched
    notes = tmp_path / "notes.txt"
    notes.write_text("not a database\n")
    files = sorted(tmp_path.iterdir())
    foreign = convtui("study", "init", str(study_file(tmp_path)), "--db", str(notes))
    assert_one_line_error(foreign, "is not a SQLite database")
    assert notes.read_text() == "not a database\n"
    folder = convtui("study", "init", str(study_file(tmp_path)), "--db", str(tmp_path))
    assert_one_line_error(folder, "is a folder")
    assert sorted(tmp_path.iterdir()) == files  # no file made, none changed


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("status",), "no study database at"),
        (("token", "ana"), "no study database at"),
        (("reassign", "ana"), "no study database at"),
        (("add-annotator", "dee"), "no study database at"),
    ],
)
def test_a_missing_study_database_is_one_line_and_is_not_created(tmp_path, args, said) -> None:
    db = tmp_path / "nope.db"
    assert_one_line_error(convtui("study", *args, "--db", str(db)), said, "study init")
    assert not db.exists()


def test_names_the_study_does_not_know_or_cannot_take_are_one_line(tmp_path: Path) -> None:
    db, _tokens = init(tmp_path)
    cases = [
        (("token", "zed"), "has no annotator 'zed' (it has ana, ben, cy)"),
        (("reassign", "zed"), "has no annotator 'zed'"),
        (("add-annotator", "ana"), "already has an annotator 'ana'"),
        (("add-annotator", "dee", "--tasks", "7"), "at most 6 more of the study's 6 tasks"),
        (("add-annotator", "dee", "--tasks", "-1"), "--tasks"),
    ]
    for args, said in cases:
        assert_one_line_error(convtui("study", *args, "--db", str(db)), said)
    assert convtui("study", "reassign", "ben", "--db", str(db)).returncode == 0
    for args in (("reassign", "ben"), ("token", "ben")):
        assert_one_line_error(convtui("study", *args, "--db", str(db)), "ben has left")
    assert status(db)["assignments"] == 12  # nothing of the refused commands was written
    plain = tmp_path / "plain.db"
    Store.open(plain).close()
    assert_one_line_error(convtui("study", "status", "--db", str(plain)), "holds no study")


# --- convtui session --study: what is refused before the app starts ----------------------------


def test_session_study_refuses_what_the_study_decides_and_unknown_annotators(tmp_path) -> None:
    db, _tokens = init(tmp_path)
    study = ("session", "--study", str(db))
    cases = [
        ((), "--study needs --annotator NAME"),
        (("--annotator", "zed"), "has no annotator 'zed' (it has ana, ben, cy)"),
        (("--annotator", "ana", "--model", "mock:x", "--turns", "4"), "drop --model, --turns"),
        (("--annotator", "ana", "--task", "BigCodeBench/2"), "drop --task"),
        (("--annotator", "ana", "--db", str(tmp_path / "other.db")), "drop --db"),
    ]
    for args, said in cases:
        assert_one_line_error(convtui(*study, *args), said)
    assert convtui("study", "reassign", "cy", "--db", str(db)).returncode == 0
    assert_one_line_error(convtui(*study, "--annotator", "cy"), "cy has left study 'pilot'")
    # Past every check, the app wants a terminal (the tests have none).
    assert_one_line_error(convtui(*study, "--annotator", "ana"), "needs a terminal")
    missing = tmp_path / "nope.db"
    assert_one_line_error(
        convtui("session", "--study", str(missing), "--annotator", "ana"), "no study database"
    )
    assert not missing.exists() and not (tmp_path / "other.db").exists()


def test_session_study_with_nothing_left_says_the_study_is_done_for_them(tmp_path) -> None:
    db, _tokens = init(tmp_path)
    with Store.open(db) as store:
        study = load_study(store)
        while (nxt := next_assignment(store, study.id, "ben")) is not None:
            sid = start_assignment(store, study.id, nxt.task_id, "ben", study.config, "human")
            store.set_session_status(sid, "solved")
    done = convtui("session", "--study", str(db), "--annotator", "ben")
    assert done.returncode == 0, done.stderr
    assert "Study 'pilot' is done for ben" in done.stdout
