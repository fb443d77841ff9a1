"""`convtui bench codeif --mode dynamic --protocol codeif`: the authors' dynamic conversation
(zhu-zhu-ding/CodeIF-Bench, branch v1, ``dynamic_conversation/multi_turn_function_eval.py``),
and `convtui report` on it (their ``dynamic_conversation/report.py``), end to end: a scripted
model (``mock:``, so nothing depends on what a model writes), the real executor, a real
SQLite file. Rules are numbered as core/codeif/authors_dynamic.py numbers them; every
expected turn and number is worked out by hand in the comments.

CodeIF/11 (``remove_occ``): its multi-turn order is IO, EH, ECH, FE, AC, CC, CS, so the
requirements are IO, EH, ECH, AC, CC, CS (rule 1) and max_turns = 2 * 6 + 2 = 14 (rule 2).
What each scripted answer passes, instruction by instruction on its own tests (rule 5):

- ``IDENTITY`` (returns ``s``): Base no ("hello" stays "hello"), IO no, EH yes (nothing is
  raised, so the except clause's assert never runs), ECH yes, AC no, CC yes, CS yes;
- ``FIRST_LAST`` (removes the first and the last occurrence): Base yes, IO no (the dataset's
  assert wants remove_occ("banana", "a") == "bann"; removing the first and last "a" gives
  "bnan"), EH, ECH yes, AC no, CC yes (two ifs: 3), CS yes;
- ``ANNOTATED``: ``FIRST_LAST`` with the annotations AC asks for: AC yes too;
- ``NO_CODE``: no ```` ```python ```` block, so the whole reply is the code (rule 4), which
  does not compile: nothing passes.
"""

from __future__ import annotations

import csv
import json
import re
import sqlite3
import subprocess
from pathlib import Path

import pytest
from support.cli import convtui_argv, env
from support.codeif import TASK, codeif, report, script
from support.data import DATA

from convtui.core.catalog.loaders import load_catalog
from convtui.core.codeif.instructions import BASE, FUNCTIONALITY_EXTENSION
from convtui.sessions import Store

pytestmark = pytest.mark.skipif(
    not (DATA / "CodeIF-Bench-L1-function.jsonl").exists(), reason=f"no CodeIF data in {DATA}"
)

IO, EH, ECH = "Input-Output Conditions", "Exception Handling", "Edge Case Handling"
AC, CC, CS = "Annotation Coverage", "Code Complexity", "Code Standard"
SCRIPT_PATH = "/tmp/tmpcodeif00.py"

IDENTITY = "```python\ndef remove_occ(s, ch):\n    return s\n```"
FIRST_LAST = """Here it is:

```python
def remove_occ(s, ch):
    first = s.find(ch)
    if first == -1:
        return s

    s = s[:first] + s[first + 1:]
    last = s.rfind(ch)
    if last == -1:
        return s
    return s[:last] + s[last + 1:]
```"""
ANNOTATED = FIRST_LAST.replace("(s, ch):", "(s: str, ch: str) -> str:")
NO_CODE = "I cannot help."

# Conversation A, turn by turn (the mock answers turn i with its i-th row):
# 1 Base: IDENTITY fails the base tests -> 2 retries Base (rule 6);
# 2 ANNOTATED passes Base -> Base first among the requirements, flagged; counter 3;
# 3 IO, the first requirement failing on turn 2's code (Base passes; rule 7): ANNOTATED
#   misses it -> 4 retries IO (rule 8);
# 4 IDENTITY misses IO again -> IO removed; and breaks Base;
# 5 Base, failing on turn 4's code and first: ANNOTATED passes it, and every requirement
#   left (EH, ECH, AC, CC, CS) passes too: the conversation ends (rule 7).
A = [IDENTITY, ANNOTATED, ANNOTATED, IDENTITY, ANNOTATED]
A_TURNS = [
    ("instruction", BASE),
    ("feedback", BASE),
    ("instruction", IO),
    ("feedback", IO),
    ("instruction", BASE),
]
# Conversation B: FIRST_LAST at turn 1 passes Base (flagged, no retry; counter 2), then
# NO_CODE for ever, which fails everything: IO and its retry (removed), Base (failing,
# first) and its retry (removed), EH, ECH, AC, CC each with a retry (removed) up to turn
# 13, counter 14 <= 14, so turn 14 gives CS; the counter then reaches 15 >= 14: the end,
# without CS's retry (rule 9). 14 turns = max_turns.
B = [FIRST_LAST, NO_CODE]
B_TURNS = [
    ("instruction", BASE),
    ("instruction", IO),
    ("feedback", IO),
    ("instruction", BASE),
    ("feedback", BASE),
    ("instruction", EH),
    ("feedback", EH),
    ("instruction", ECH),
    ("feedback", ECH),
    ("instruction", AC),
    ("feedback", AC),
    ("instruction", CC),
    ("feedback", CC),
    ("instruction", CS),
]

# Each turn's (IA, IFR, CA, IFE), report.py's order (rules 6 and 10).
A_METRICS = [
    (0, 0, 0, 0),  # Base fails: IA = CA = IFE = 0
    (1, 0, 1, 0.5),  # the retry passes: IA = CA = 1, IFE 0.5
    # given [Base, IO]: Base passes, IO not: CA 1/2; flagged: Base, passing: IFR 0; IFE 1/3
    (0, 0, 1 / 2, 1 / 3),
    # IDENTITY: Base and IO fail: CA 0/2; Base (flagged) fails: IFR 1/1; IFE 0/4
    (0, 1, 0, 0),
    # given [Base, IO, Base]: 2 of 3 pass; Base passes: IFR 0; IFE 2/5
    (1, 0, 2 / 3, 2 / 5),
]
B_METRICS = [
    (1, 0, 1, 1),  # Base passes: IA = CA = IFE = 1
    # Turns 2-5: nothing passes; Base is flagged and fails: IFR 1/1 until its retry fails
    # and removes it (turn 5's IFR is counted before the removal).
    *[(0, 1, 0, 0)] * 4,
    # Turns 6-14: no flag left: IFR 0 (their "passed_num > 0 else 0").
    *[(0, 0, 0, 0)] * 9,
]
# report.py's pairs of one task: turns (1, 2), (3, 4), ..., a last odd turn alone.
A_PAIRS = {
    "1-2": (0.5, 0, 0.5, 0.25),
    "3-4": (0, 0.5, 0.25, 1 / 6),  # (0+0)/2, (0+1)/2, (1/2+0)/2, (1/3+0)/2
    "5-6": (1, 0, 2 / 3, 2 / 5),  # turn 5 alone
    # avg: IA (.5+0+1)/3, IFR (0+.5+0)/3, CA (.5+.25+2/3)/3, IFE (.25+1/6+2/5)/3
    "avg": (0.5, 1 / 6, 17 / 36, 49 / 180),
}
B_PAIRS = {
    "1-2": (0.5, 0.5, 0.5, 0.5),
    "3-4": (0, 1, 0, 0),
    "5-6": (0, 0.5, 0, 0),
    **{f"{t}-{t + 1}": (0, 0, 0, 0) for t in (7, 9, 11, 13)},
    "avg": (0.5 / 7, 2 / 7, 0.5 / 7, 0.5 / 7),  # seven pairs
}


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    """One database with conversation A and conversation B (two scripted models)."""
    folder = tmp_path_factory.mktemp("codeif-authors-dynamic")
    db = folder / "d.db"
    models = {}
    for name, replies in (("a", A), ("b", B)):
        models[name] = script(folder / f"{name}.jsonl", replies)
        done = codeif(db, "--mode", "dynamic", "--protocol", "codeif", "--model", models[name])
        assert done.returncode == 0, done.stderr
    return db, models


def sessions_of(db: Path) -> dict[str, tuple[str, str, str]]:
    """model -> (session id, status, run selection)."""
    with sqlite3.connect(db) as conn:
        found = conn.execute(
            "SELECT r.model, s.id, s.status, r.selection FROM sessions s "
            "JOIN runs r ON r.id = s.run_id"
        ).fetchall()
    return {model: (sid, status, selection) for model, sid, status, selection in found}


def turns_of(db: Path, session_id: str):
    with Store.open(db) as store:
        return store.load_turns(session_id)


def test_the_turns_and_what_the_model_is_sent(played):
    db, models = played
    task = load_catalog("codeif", DATA).get(TASK)
    texts = {r.category: r.text for r in task.requirements}
    found = sessions_of(db)
    for name, expected, status in (("a", A_TURNS, "exhausted"), ("b", B_TURNS, "exhausted")):
        session_id, got_status, selection = found[models[name]]
        assert "mode=dynamic;protocol=codeif;conversation=authors;" in selection
        turns = turns_of(db, session_id)
        assert [t.received.user_source for t in turns] == [
            f"codeif:{kind}:{category}" for kind, category in expected
        ]
        # Functionality Extension is never given (rule 1), nor checked.
        assert all(FUNCTIONALITY_EXTENSION not in t.received.user_source for t in turns)
        assert got_status == status  # IO is never followed (the dataset's banana assert)
    a = turns_of(db, found[models["a"]][0])
    # Rule 3: the task's prompt alone; rule 7: the requirement's text as is; the base
    # instruction given again is the prompt again. Each turn sees the whole conversation.
    assert [m.content for m in a[0].prompt] == [task.prompt]
    assert a[2].received.user == texts[IO]
    assert a[4].received.user == task.prompt
    assert [m.role for m in a[4].prompt] == ["user", "assistant"] * 4 + ["user"]
    assert a[4].prompt[1].content == IDENTITY  # the model's whole reply, as it wrote it
    # Rule 8, build_feedback_prompt's words. The error is what their script prints: turn 1's
    # code is 2 lines, then a blank line, so the base tests start on line 4, and the first
    # (hello) fails.
    assert a[1].received.user == (
        "Please note that you have not followed the instructions below:\n"
        f'"{task.prompt}"\n\nError message:\n```\nTraceback (most recent call last):\n'
        f'  File "{SCRIPT_PATH}", line 4, in <module>\n'
        '    assert remove_occ("hello","l") == "heo"\nAssertionError\n```\n\n'
    )
    # Turn 3's code is ANNOTATED read by rule 4: 9 lines (the prose and the blank line
    # gone), so IO's first test (banana) is on line 11.
    assert a[2].code == (
        "def remove_occ(s: str, ch: str) -> str:\n    first = s.find(ch)\n"
        "    if first == -1:\n        return s\n    s = s[:first] + s[first + 1:]\n"
        "    last = s.rfind(ch)\n    if last == -1:\n        return s\n"
        "    return s[:last] + s[last + 1:]"
    )
    assert a[3].received.user.startswith(
        f'Please note that you have not followed the instructions below:\n"{texts[IO]}"\n\n'
    )
    assert (
        f'  File "{SCRIPT_PATH}", line 11, in <module>\n'
        '    assert remove_occ("banana", "a") == "bann"\nAssertionError\n```\n\n'
    ) in a[3].received.user
    b = turns_of(db, found[models["b"]][0])
    # B's turn 3: turn 2's whole reply is the code, and the script does not compile: Python's
    # SyntaxError report, its first line's indent gone with error_msg.strip().
    assert b[2].code == NO_CODE
    assert f'```\nFile "{SCRIPT_PATH}", line 1\n    I cannot help.\n' in b[2].received.user
    assert "SyntaxError: invalid syntax" in b[2].received.user


def test_report_prints_the_scripts_turns_and_report_py_pairs(played, tmp_path):
    db, models = played
    done = report(db, "--json", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    codeif_data = data["codeif"]
    assert set(codeif_data["metrics"]) == {"authors (dynamic)"}
    sessions = {s["model"]: s for s in codeif_data["sessions"]}
    groups = {g["model"]: g for g in codeif_data["groups"]}
    for name, turns, per_turn, pairs in (
        ("a", A_TURNS, A_METRICS, A_PAIRS),
        ("b", B_TURNS, B_METRICS, B_PAIRS),
    ):
        session = sessions[models[name]]
        assert session["conversation"] == "authors"
        # Per round: the instruction given and every checked instruction's verdict.
        assert [(r["kind"], r["instruction"]) for r in session["rounds"]] == turns
        assert all(len(r["own"]) == 7 for r in session["rounds"])  # Base and 6 requirements
        scores = session["scores"]
        assert scores["metrics"] == "authors"
        got = [(t["ia"], t["ifr"], t["ca"], t["ife"]) for t in scores["turns"]]
        assert got == [pytest.approx(m) for m in per_turn]
        group = groups[models[name]]
        assert (group["metrics"], group["mode"], group["protocol"]) == (
            "authors",
            "dynamic",
            "codeif",
        )
        rows = {r["turns"]: r for r in group["rounds"]}
        assert list(rows) == list(pairs)
        for label, values in pairs.items():
            assert (
                rows[label]["ia"],
                rows[label]["ifr"],
                rows[label]["ca"],
                rows[label]["ife"],
            ) == (pytest.approx(values))
            assert rows[label]["ia_tasks"] == 1
    # CSV: report.py's row names in the round column.
    rounds_csv = next(f for f in data["files"] if f.endswith("-codeif-rounds.csv"))
    with open(rounds_csv, encoding="utf-8") as handle:
        rows_a = [r for r in csv.DictReader(handle) if r["model"] == models["a"]]
    assert [(r["round"], r["metrics"], r["ca"]) for r in rows_a] == [
        ("1-2", "authors", "0.5000"),
        ("3-4", "authors", "0.2500"),
        ("5-6", "authors", "0.6667"),
        ("avg", "authors", "0.4722"),
    ]
    # The text table: one per group, as report.py prints it (percent, one decimal).
    text = subprocess.run(
        convtui_argv("report", "--db", str(db), "--out", str(tmp_path)),
        capture_output=True,
        text=True,
        env={**env(), "COLUMNS": "200"},
        timeout=300,
        check=False,
    ).stdout
    assert "per pair of turns as the authors' report.py averages" in text
    row = re.search(
        r"avg\s*│\s*(\S+) \(1\)\s*│\s*(\S+) \(1\)\s*│\s*(\S+) \(1\)\s*│\s*(\S+) \(1\)", text
    )
    assert row is not None and row.groups() == ("50.0", "16.7", "47.2", "27.2")
    assert "authors (dynamic): as the CodeIF-Bench authors' dynamic conversation" in text


def test_the_papers_formulas_still_score_them_on_request(played, tmp_path):
    db, models = played
    done = report(db, "--json", "--out", str(tmp_path), "--metrics", "paper")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)["codeif"]
    group = next(g for g in data["groups"] if g["model"] == models["a"])
    assert group["metrics"] == "paper"
    assert [r["round"] for r in group["rounds"]] == [1, 2, 3, 4, 5]
    assert all("ife" in r for r in group["rounds"])
    session = next(s for s in data["sessions"] if s["model"] == models["a"])
    assert session["scores"]["metrics"] == "paper"
    # Round 1 of A: IDENTITY follows no given instruction (only Base is given).
    assert session["scores"]["rounds"][0] == {
        "round": 1,
        "ia": 0.0,
        "ca": 0.0,
        "ifr": 0.0,
        "ife": 0.0,
    }


def test_an_interrupted_conversation_continues_as_the_script_would(played, tmp_path):
    db, models = played
    copy = tmp_path / "r.db"
    with sqlite3.connect(db) as source, sqlite3.connect(copy) as target:
        source.backup(target)
    session_id = sessions_of(copy)[models["b"]][0]
    with sqlite3.connect(copy) as conn:
        # Forget B's last four turns, as if the run had been killed after turn 10.
        conn.execute("DELETE FROM turns WHERE session_id = ? AND idx >= 10", (session_id,))
        conn.execute(
            "UPDATE sessions SET status = 'running', turns_done = 10 WHERE id = ?", (session_id,)
        )
        conn.execute("UPDATE runs SET status = 'interrupted'")
        before = conn.execute("SELECT count(*) FROM model_calls WHERE cache_hit = 0").fetchone()
    again = codeif(copy, "--mode", "dynamic", "--protocol", "codeif", "--model", models["b"])
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["resumed"] is True
    assert [t.received.user_source for t in turns_of(copy, session_id)] == [
        f"codeif:{kind}:{category}" for kind, category in B_TURNS
    ]
    with sqlite3.connect(copy) as conn:
        after = conn.execute("SELECT count(*) FROM model_calls WHERE cache_hit = 0").fetchone()
    assert after == before  # the four turns' calls were journaled: reused, not paid again
