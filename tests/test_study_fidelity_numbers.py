"""``convtui study fidelity``'s numbers against values worked out by hand: two annotators with
fixed words (support/fidelity.py: ana's words ask for the reference, ben's do not), a scripted
``mock:`` simulator whose words ask for it too, and a target that writes the reference exactly
when asked (so which outcomes pass is known before anything runs). Four states (each
session's turns 0 and 1), three sources handed on plus the control, one target.

By hand, per state (pass, share of tests passed; FAILS passes none of ana's or ben's tests):
the control fails everywhere; the person passes on ana's two states; the simulator passes on
all four. The unit of every test and interval is the session: ana's and ben's, two states
each, so two sessions (too few for an interval, and the sign test counts two, not four)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.data import needs_bigcodebench
from support.fidelity import KEYWORD, PEOPLE, Keyed, count, dump, record_study
from support.scripted import script

from convtui.benchmarks.commands.study.study_fidelity import FidelityOptions, build_fidelity
from convtui.core.metrics.stats import sign_test
from convtui.core.models.registry import open_backend
from convtui.core.studies.fidelity import NO_FEEDBACK, PERSON
from convtui.core.studies.fidelity_rows import Tables

pytestmark = needs_bigcodebench

SIM_WORDS = f"{KEYWORD}: the expected output is a dict."
TARGET = "keyed:target"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory, executor, catalog):
    folder = tmp_path_factory.mktemp("fidelity")
    db = folder / "study.db"
    ids = record_study(db, executor, catalog, folder / "scripts")
    simulator = script(folder / "sim.jsonl", ["unused"], [SIM_WORDS])
    return db, ids, simulator, catalog


def _run(db: Path, simulator: str, catalog, seed: int = 7) -> tuple:
    target = Keyed(TARGET, [catalog.get("BigCodeBench/2"), catalog.get("BigCodeBench/8")])

    def open_model(spec: str):
        return target if spec == TARGET else open_backend(spec)

    options = FidelityOptions(
        db, (simulator,), (TARGET,), executor=_isolated(), seed=seed, resamples=500, quiet=True
    )
    return build_fidelity(options, open_model), target


def _isolated():
    from convtui.benchmarks.settings import ExecutorSettings

    return ExecutorSettings(jobs=2)


def test_every_number_of_the_report_is_the_one_worked_out_by_hand(recorded) -> None:
    db, _ids, simulator, catalog = recorded
    before = dump(db)
    result, target = _run(db, simulator, catalog)
    sim = f"simulator:expert:{simulator}"
    report = result.report

    assert len(result.states) == 4
    assert target.calls == 4 * 3  # a prompt per state and source
    # Per state and source: (passed, tests_passed, tests_total) from the file.
    rows = {
        (r[0], r[1]): (r[2], r[3], r[4])
        for r in _rows(
            db,
            "SELECT session_id || '/' || turn_idx, source, passed, tests_passed, tests_total "
            "FROM fidelity_turns",
        )
    }
    assert len(rows) == 4 * 3
    totals = {s.state_id: rows[(s.state_id, NO_FEEDBACK)][2] for s in result.states}
    for state in result.states:
        total = totals[state.state_id]
        ana = state.annotator == "ana"
        assert rows[(state.state_id, NO_FEEDBACK)] == (0, 0, total)
        assert rows[(state.state_id, PERSON)] == ((1, total, total) if ana else (0, 0, total))
        assert rows[(state.state_id, sim)] == (1, total, total)

    # Per source, pooled: the control first, every table holds it.
    by_source = {r.source: r for r in report.sources}
    assert list(by_source) == [NO_FEEDBACK, PERSON, sim]
    assert (by_source[NO_FEEDBACK].pass_rate, by_source[NO_FEEDBACK].mean_share) == (0.0, 0.0)
    assert by_source[NO_FEEDBACK].gain_pass.difference.value == 0.0
    assert (by_source[PERSON].pass_rate, by_source[PERSON].mean_share) == (0.5, 0.5)
    assert by_source[PERSON].gain_pass.difference.value == 0.5
    assert (by_source[sim].pass_rate, by_source[sim].gain_share.difference.value) == (1.0, 1.0)
    assert by_source[PERSON].sessions == by_source[sim].gain_pass.units == 2
    # Both sessions gain with the simulator's words (not four states): 2·(1/4) = 0.5; the
    # person's words gain on ana's session and tie on ben's: one session, p = 1.
    assert by_source[sim].gain_pass.p_value == sign_test(2, 0) == 0.5
    assert by_source[PERSON].gain_pass.p_value == sign_test(1, 0) == 1.0
    for task, rows_of_task in report.sources_by_task.items():
        assert rows_of_task[0].source == NO_FEEDBACK
        person = next(r for r in rows_of_task if r.source == PERSON)
        assert person.pass_rate == (1.0 if task == "BigCodeBench/2" else 0.0)

    # Per annotator: ana's words are worth +1 (both states pass, the control never), ben's 0.
    worth = {r.annotator: r for r in report.annotators}
    assert (worth["ana"].gain_pass.difference.value, worth["ana"].states) == (1.0, 2)
    assert (worth["ana"].gain_pass.units, worth["ana"].gain_pass.p_value) == (1, 1.0)
    assert (worth["ben"].gain_pass.difference.value, worth["ben"].control_pass_rate) == (0.0, 0.0)
    assert worth["ben"].gain_pass.p_value == 1.0
    assert (worth["ana"].holm_pass, worth["ben"].holm_pass) == (1.0, 1.0)

    # Per pair: the person against the control (+0.5) and against the simulator (-0.5).
    pairs = {p.other: p for p in report.pairs}
    assert list(pairs) == [NO_FEEDBACK, sim]
    assert pairs[NO_FEEDBACK].pass_diff.difference.value == 0.5
    against = pairs[sim].share_diff
    ben = next(s.session_id for s in result.states if s.annotator == "ben")
    assert (against.difference.value, against.first_better, against.second_better) == (
        -0.5,
        (),
        (ben,),
    )
    # One session differs: the exact sign-flip test's p is 2/2 = 1.
    assert against.p_value == 1.0
    # Two sessions are too few for an interval (core/metrics/stats.py MIN_UNITS): said so.
    assert against.difference.low is None and against.difference.high is None
    assert against.difference.reason == "2 sessions are too few for an interval (at least 10)"
    assert report.by_target[TARGET] == Tables(report.sources, report.annotators, report.pairs)

    # The words: the person's and the simulator's, the control has none.
    words = {w.source: w for w in result.words.sources}
    assert words[PERSON].texts == 4 and words[sim].texts == 4
    said = [PEOPLE["ana"][1], PEOPLE["ben"][1]]
    assert words[PERSON].mean_words == sum(2 * len(w.split()) for w in said) / 4
    assert words[sim].mean_words == len(SIM_WORDS.split())

    # Who the simulator is: model, persona (the study's VF:expert), protocol, prompt digest.
    who = result.identities[sim]
    assert (who.model, who.persona, who.protocol) == (simulator, "expert", "convtui")
    assert who.prompt_sha256 is not None and len(who.prompt_sha256) == 64
    assert count(db, "SELECT count(*) FROM fidelity_feedback WHERE prompt_sha256 != ''") == 4

    # The sessions' own tables are as they were; the second run asks and runs nothing and
    # gives the same report, and the same seed the same intervals.
    assert dump(db) == before
    calls, executions = (
        count(db, "SELECT count(*) FROM fidelity_calls"),
        count(db, "SELECT count(*) FROM executions"),
    )
    again, target_again = _run(db, simulator, catalog)
    assert target_again.calls == 0
    assert count(db, "SELECT count(*) FROM fidelity_calls") == calls
    assert count(db, "SELECT count(*) FROM executions") == executions
    assert json.dumps(again.to_json()["sources"]) == json.dumps(result.to_json()["sources"])
    assert again.report == result.report
    assert dump(db) == before


def _rows(db: Path, sql: str) -> list[tuple]:
    import sqlite3

    with sqlite3.connect(db) as conn:
        return conn.execute(sql).fetchall()
