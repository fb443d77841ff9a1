"""``convtui study fidelity`` end to end on real models, over a study recorded as people record
one: a study file made into a study database, then two annotators, each signed in with their
own token, playing their assignment in the Textual app (Pilot), typing fixed words and sending
them. The study's code model is scripted (``mock:``: every reply fails the task's tests), so
the recorded sessions, and so the states, do not depend on what a model writes. The fidelity
runs then use real models: the embedded SmolLM2 as simulator and target (in process), then
llama.cpp's server on the same weights as the target. Only what a model cannot change is
asserted: the rows exist and are linked to the people's turns and to executions, their
counts, no model call and no execution the second time, the sessions' own tables unchanged;
never what a model writes.

The study is written from its file as ``convtui study init`` writes it, but with every reply
bounded to MAX_TOKENS: a study file cannot set that, and the protocol's 1024 tokens make this
test about four times slower (SmolLM2 writes hundreds) without anything more to check."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.cli import invoke
from support.data import needs_bigcodebench
from support.fidelity import bounded, count, dump
from support.scripted import script
from support.sqlite_rows import fetchall
from support.studies import write_study
from support.study_pilot import AppFactory, annotate
from support.study_play import FAILS

from convtui.core.studies.spec import StudySpec
from convtui.sessions.studies.fidelity import FIDELITY_TABLES

pytestmark = [needs_bigcodebench, pytest.mark.slow]

# One task given to both annotators (overlap 2, as a study gives a task to several for
# agreement), one feedback turn: two states, one per person. Both saw the same code, so the
# model calls that do not carry a person's words are asked once and found the second time:
# the smallest study with two people, for a real model is slow here.
WORDS = {
    "ana": "ana: the function returns None; build the dict.",
    "ben": "ben: look at the failing test.",
}
STUDY = """
name = "fidelity"
tasks = ["BigCodeBench/2"]
model = "{model}"
feedback = "CF,EF:full,VF:novice"
turns = 1
annotators = ["ana", "ben"]
overlap = 2
seed = 0
"""
EMBEDDED = SIMULATOR = "local:smollm2"
MAX_TOKENS = 32  # the smallest replies that still say something: a real model is slow


def _study(folder: Path) -> tuple[Path, str]:
    """The study file, read as ``convtui study init`` reads it, written to a database under
    its config with every reply bounded to MAX_TOKENS (``support.studies.write_study``: the
    store's own ``create_study``, each annotator's token ``token-of-<name>``); the database
    and the study's model."""
    model = script(folder / "study-model.jsonl", [FAILS])
    path = folder / "STUDY.toml"
    path.write_text(STUDY.format(model=model))
    spec = StudySpec.from_toml(path)
    db = folder / "study.db"
    write_study(db, spec, bounded(spec.config(), MAX_TOKENS))
    return db, model


def _fidelity(db: Path, *targets: str) -> dict:
    with_targets = [arg for target in targets for arg in ("--target", target)]
    done = invoke(
        "study", "fidelity", "--db", str(db), "--simulator", SIMULATOR, *with_targets,
        "--json", "--resamples", "50",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _people_turns(db: Path) -> set[tuple[str, int]]:
    """The turns that carry a person's words: (session, turn) of each annotator's session in
    the study, the words theirs as they sent them."""
    said = fetchall(
        db,
        "SELECT t.session_id, t.idx, a.annotator, t.verbal_feedback FROM turns t "
        "JOIN study_assignments a ON a.session_id = t.session_id "
        "WHERE t.feedback_source = 'human'",
    )
    assert sorted((name, idx, words) for _s, idx, name, words in said) == [
        (name, 0, words) for name, words in sorted(WORDS.items())
    ]
    return {(session, idx) for session, idx, _name, _words in said}


def _linked(db: Path, people: set[tuple[str, int]], target: str) -> None:
    """The states are the people's turns, each with its feedback row and ``target``'s turns;
    every fidelity row stands on one of them. Every feedback that said something names its
    answered call; every target turn names its execution (of the state's task, on the code
    the turn kept) and its answered call, asked once per request; the person's turn was
    handed the person's words, the simulator's its feedback."""
    on = {
        table: set(fetchall(db, f"SELECT session_id, turn_idx FROM {table}"))
        for table in FIDELITY_TABLES
    }
    assert on["fidelity_feedback"] == people
    assert set(fetchall(db, TURNS_OF, (target,))) == people
    assert on["fidelity_calls"] <= people
    for dangling in (
        "SELECT count(*) FROM fidelity_feedback f LEFT JOIN fidelity_calls c ON c.id = f.call_id "
        "WHERE f.status = 'said' AND c.status IS NOT 'ok'",
        "SELECT count(*) FROM fidelity_turns t JOIN sessions s ON s.id = t.session_id "
        "LEFT JOIN executions e ON e.id = t.execution_id "
        "WHERE e.id IS NULL OR e.task_id != s.task_id OR e.code_blob != t.code_blob",
        "SELECT count(*) FROM fidelity_turns t LEFT JOIN fidelity_calls c ON c.id = t.call_id "
        "WHERE c.status IS NOT 'ok' OR c.role != 'target' OR c.model != t.target",
    ):
        assert count(db, dangling) == 0, dangling
    [(asked, requests)] = fetchall(
        db,
        "SELECT (SELECT count(*) FROM fidelity_calls WHERE role = 'target' AND model = ?1), "
        "(SELECT count(DISTINCT request_hash) FROM fidelity_turns WHERE target = ?1)",
        (target,),
    )
    assert asked == requests
    said = count(db, "SELECT count(*) FROM fidelity_feedback WHERE status = 'said'")
    [(handed, sent)] = fetchall(db, HANDED, (target,))
    assert handed == sent == len(people) + said


TURNS_OF = "SELECT session_id, turn_idx FROM fidelity_turns WHERE target = ?"
# Of ``target``'s turns from the person's and the simulator's feedback: how many were sent
# that feedback in their prompt's last message, and how many there are.
HANDED = """
SELECT sum(instr(m.text, coalesce(w.text, t.verbal_feedback)) > 0), count(*)
FROM fidelity_turns f
JOIN fidelity_calls c ON c.id = f.call_id
JOIN blobs m ON m.hash = json_extract(c.messages_json, '$[#-1][1]')
JOIN turns t ON t.session_id = f.session_id AND t.idx = f.turn_idx
LEFT JOIN fidelity_feedback s
  ON s.session_id = f.session_id AND s.turn_idx = f.turn_idx AND s.source = f.source
LEFT JOIN blobs w ON w.hash = s.text_blob
WHERE f.target = ? AND (f.source = 'person' OR s.status = 'said')
"""


def _asks_nothing_again(db: Path, target: str) -> dict:
    """The same command again makes no model call and runs nothing; its report."""
    calls = count(db, "SELECT count(*) FROM fidelity_calls")
    runs = count(db, "SELECT count(*) FROM executions")
    again = _fidelity(db, target)
    assert again["run"] == {"simulator_steps": 0, "target_turns": 0}
    assert count(db, "SELECT count(*) FROM fidelity_calls") == calls
    assert count(db, "SELECT count(*) FROM executions") == runs
    return again


def test_a_study_played_in_the_app_then_real_models_as_simulator_and_target(
    tmp_path, executor, catalog, smollm2_path, monkeypatch
):
    pytest.importorskip("llama_cpp")
    monkeypatch.setenv("CONVTUI_CONFIG_DIR", str(tmp_path / "config"))  # not the user's theme
    db, model = _study(tmp_path)
    apps = AppFactory(db, executor, catalog, model)
    try:
        for name, words in WORDS.items():
            theirs = count(db, f"SELECT count(*) FROM study_assignments WHERE annotator = '{name}'")
            # Each signs in with their own token and plays as themselves.
            assert annotate(apps, f"token-of-{name}", words, theirs) == name
    finally:
        apps.close()
    people = _people_turns(db)
    # The sessions' own tables as `sqlite3 .dump` writes them (iterdump is the same SQL text),
    # restricted to those tables: the fidelity study adds rows beside them, never in them.
    before = dump(db)

    first = _fidelity(db, EMBEDDED)
    assert len(first["states"]) == len(people)
    # The simulator is asked once for both states (they show it the same code), twice when
    # its words copied the reference and it was asked again; one feedback row a state, and a
    # target turn a state for each source that exists (none, the person, the simulator when
    # it said something).
    assert 1 <= count(db, "SELECT count(*) FROM fidelity_calls WHERE role = 'simulator'") <= 2
    assert count(db, "SELECT count(*) FROM fidelity_feedback") == len(people)
    sources = 2 * len(people)
    sources += count(db, "SELECT count(*) FROM fidelity_feedback WHERE status = 'said'")
    assert count(db, "SELECT count(*) FROM fidelity_turns") == sources
    assert [r["source"] for r in first["sources"]][:2] == ["none", "person"]
    _linked(db, people, EMBEDDED)
    assert _asks_nothing_again(db, EMBEDDED)["sources"] == first["sources"]
    assert dump(db) == before

    from support.llama_server import running_llama_server

    with running_llama_server(smollm2_path, 4096, tmp_path) as url:
        served = _fidelity(db, url)
        assert served["run"] == {"simulator_steps": 0, "target_turns": sources}
        _linked(db, people, url)
        _asks_nothing_again(db, url)
    assert dump(db) == before
