"""`convtui bench codeif` end to end: a scripted model (``mock:``, so the rounds do not
depend on what a model writes), the real executor and a real SQLite file. Static: one turn per
instruction, each given the whole conversation so far and checked against every instruction
given. Dynamic (by convtui's rules, ``--protocol convtui``): a reference-code answer follows
the initial instruction, so the next round gives the first instruction it does not follow; a
missed one gets a feedback round. A run cut short continues without paying for a finished call
twice. The authors' dynamic script (``--protocol codeif``) is
test_codeif_bench_authors_dynamic.py's."""

from __future__ import annotations

import json
import sqlite3
import subprocess

import pytest
from support.cli import convtui_argv, env
from support.codeif import TASK, codeif, report, rounds, script
from support.data import DATA
from support.sqlite_rows import fetchall

from convtui.core.catalog.loaders import load_catalog
from convtui.core.codeif.instructions import BASE, instructions

pytestmark = pytest.mark.skipif(
    not (DATA / "CodeIF-Bench-L1-function.jsonl").exists(), reason=f"no CodeIF data in {DATA}"
)


@pytest.fixture(scope="module")
def reference_code() -> str:
    return load_catalog("codeif", DATA).get(TASK).ground_truth


def test_a_static_conversation_records_one_turn_per_instruction(tmp_path, reference_code):
    task = load_catalog("codeif", DATA).get(TASK)
    order = instructions(task)
    model = script(tmp_path / "m.jsonl", [f"```python\n{reference_code}\n```"] * len(order))
    done = codeif(tmp_path / "s.db", "--mode", "static", "--model", model)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["sessions_played"] == 1
    found = rounds(tmp_path / "s.db")
    assert [r[0] for r in found] == list(range(len(order)))
    assert [r[1] for r in found] == [f"codeif:instruction:{i.category}" for i in order]
    # Round i is given (I1, A1, ..., I_i): 2i - 1 messages.
    assert [len(json.loads(r[2])) for r in found] == [2 * i + 1 for i in range(len(order))]
    with sqlite3.connect(tmp_path / "s.db") as conn:
        calls = conn.execute("SELECT count(*) FROM model_calls WHERE cache_hit = 0").fetchone()
        (status,) = conn.execute("SELECT status FROM sessions").fetchone()
    assert calls == (len(order),)
    # The reference code was written for the initial instruction only: it cannot follow
    # every instruction, so the conversation ends exhausted, not solved.
    assert status == "exhausted"
    # The same command again plays nothing.
    again = codeif(tmp_path / "s.db", "--mode", "static", "--model", model)
    assert json.loads(again.stdout)["sessions_played"] == 0


def test_a_dynamic_conversation_skips_what_is_followed_and_gives_feedback(tmp_path, reference_code):
    task = load_catalog("codeif", DATA).get(TASK)
    broken = "```python\ndef remove_occ(s, ch):\n    return s\n```"
    model = script(tmp_path / "m.jsonl", [f"```python\n{reference_code}\n```"] + [broken] * 20)
    db = tmp_path / "d.db"
    # convtui's dynamic conversation (--protocol codeif plays the authors' script instead:
    # test_codeif_bench_authors_dynamic.py).
    done = codeif(db, "--mode", "dynamic", "--protocol", "convtui", "--model", model)
    assert done.returncode == 0, done.stderr
    found = rounds(db)
    sources = [r[1] for r in found]
    assert sources[0] == f"codeif:instruction:{BASE}"
    # The reference code follows the initial instruction and Input-Output Conditions (its
    # asserts pass on it), so round 2 gives the first one it does not follow.
    second = sources[1].split(":", 2)[2]
    order = [i.category for i in instructions(task)]
    assert order.index(second) > 0
    # The broken answer misses it: a feedback round for the same instruction follows.
    assert sources[2] == f"codeif:feedback:{second}"
    assert len(found) <= 2 * len(order)


def test_an_interrupted_conversation_continues_without_a_second_call(tmp_path, reference_code):
    task = load_catalog("codeif", DATA).get(TASK)
    n = len(instructions(task))
    model = script(tmp_path / "m.jsonl", [f"```python\n{reference_code}\n```"] * n)
    db = tmp_path / "r.db"
    assert codeif(db, "--mode", "static", "--model", model).returncode == 0
    # Forget the last three rounds, as if the run had been killed after round n - 3.
    with sqlite3.connect(db) as conn:
        conn.execute("DELETE FROM turns WHERE idx >= ?", (n - 3,))
        conn.execute("UPDATE sessions SET status = 'running', turns_done = ?", (n - 3,))
        conn.execute("UPDATE runs SET status = 'interrupted'")
        before = conn.execute("SELECT count(*) FROM model_calls WHERE cache_hit = 0").fetchone()
    again = codeif(db, "--mode", "static", "--model", model)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["resumed"] is True
    assert [r[0] for r in rounds(db)] == list(range(n))
    with sqlite3.connect(db) as conn:
        after = conn.execute("SELECT count(*) FROM model_calls WHERE cache_hit = 0").fetchone()
    assert after == before  # the three rounds' calls were finished: reused, not paid again


def test_a_selection_of_no_codeif_task_is_one_line(tmp_path):
    done = subprocess.run(
        convtui_argv("bench", "codeif", "--ids", "0-9", "--db", str(tmp_path / "x.db")),
        capture_output=True,
        text=True,
        env=env(),
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "CodeIF/11 to CodeIF/60" in done.stderr


def test_chain_of_thought_prompting_asks_each_round_to_reason_and_is_reported_apart(
    tmp_path, reference_code
):
    """--prompting cot: every round's message, as the model is sent it, ends with the request
    to reason first; what the round said (its recorded words) is the benchmark's; the run is
    another run, and report shows it as its own column."""
    task = load_catalog("codeif", DATA).get(TASK)
    order = instructions(task)
    reply = f"Let me think.\n\n```python\n{reference_code}\n```"
    model = script(tmp_path / "m.jsonl", [reply] * len(order))
    db = tmp_path / "s.db"
    assert codeif(db, "--mode", "static", "--model", model).returncode == 0
    cot = codeif(db, "--mode", "static", "--model", model, "--prompting", "cot")
    assert cot.returncode == 0, cot.stderr
    assert json.loads(cot.stdout)["sessions_played"] == 1  # not the direct run resumed
    prompts = fetchall(
        db,
        "SELECT t.prompt_json, json_extract(t.received_json, '$.user') FROM turns t "
        "JOIN sessions s ON s.id = t.session_id JOIN runs r ON r.id = s.run_id "
        "WHERE r.selection LIKE '%prompting=cot%' ORDER BY t.idx",
    )
    blobs = dict(fetchall(db, "SELECT hash, text FROM blobs"))
    assert len(prompts) == len(order)
    for prompt_json, said in prompts:
        last = blobs[json.loads(prompt_json)[-1][1]]  # (role, blob hash of the content)
        assert last.startswith(said) and "step by step" in last[len(said) :]
    groups = json.loads(report(db, "--json").stdout)["codeif"]["groups"]
    assert sorted(g["prompting"] for g in groups) == ["cot", "direct"]
