"""`--protocol convtui` leaves an instruction whose tests cannot judge an answer out of its
scores (the errata, core/codeif/errata.csv): CodeIF/29's Exception Handling test passes on a
placeholder that does nothing. Static runs of the scripted model (the task's reference code
every round), the real executor, `report --json`; `--protocol codeif` keeps the round."""

from __future__ import annotations

import json

from support.codeif import codeif, report, script
from support.data import DATA, data_file

from convtui.core.catalog.loaders import load_catalog

TASK = "CodeIF/29"
LEFT = "Exception Handling"


def test_convtui_leaves_out_what_cannot_judge_and_codeif_keeps_it(tmp_path) -> None:
    data_file("CodeIF-Bench-L1-function.jsonl")
    task = load_catalog("codeif", DATA).get(TASK)
    model = script(tmp_path / "m.jsonl", [f"```python\n{task.ground_truth}\n```"] * 40)
    db = tmp_path / "c.db"
    for protocol in ("convtui", "codeif"):
        done = codeif(db, "--ids", TASK, "--protocol", protocol, "--model", model)
        assert done.returncode == 0, done.stderr
    done = report(db, "--json", "--out", str(tmp_path), "--resamples", "200")
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)["codeif"]
    groups = {g["protocol"]: g for g in found["groups"]}
    sessions = {s["protocol"]: s for s in found["sessions"]}
    assert groups["convtui"]["left_out"][LEFT]["tasks"] == 1
    assert "placeholder" in groups["convtui"]["left_out"][LEFT]["why"][TASK]
    assert groups["codeif"]["left_out"] == {}
    kept = sessions["convtui"]["rounds"]
    assert all(r["instruction"] != LEFT and LEFT not in r["followed"] for r in kept)
    assert [r["round"] for r in kept] == list(range(1, len(kept) + 1))
    assert LEFT in {r["instruction"] for r in sessions["codeif"]["rounds"]}
    assert LEFT not in groups["convtui"]["ia_by_category"]
    # One model under both protocols: its shift, paired by task (one: no interval), no ranking.
    standings = found["standings"]
    assert standings["rankings"] == []
    (shift,) = standings["protocol_shifts"]
    assert (shift["first"], shift["second"], shift["tasks"]) == ("convtui", "codeif", 1)
    assert "reason" in shift["ca"]["difference"]
