"""CodeIF-Bench's L-1 repository static numbers, three ways, on the tasks usable here: the
authors' ``IA_CA.py`` (branch v1, ``static_conversation/repo/test/IA_CA.py``) run unmodified on
their published verdicts, the same script on our verdicts, and ``convtui report --metrics
authors`` on a ``bench codeif --score-only`` run of their published completions.

Their script reads two files through ``utils.read_json`` (its paths are left empty in the
published file): the base verdicts and the ``n_round`` verdicts. It is run here as published,
with a ``utils`` module of ours that hands it the rows (those of the tasks usable here), so
nothing of it is edited. Nothing of theirs is in this repository: check out the two commits::

    git clone https://github.com/zhu-zhu-ding/CodeIF-Bench ref
    git -C ref worktree add ../ref-v0 93b17ef
    git -C ref worktree add ../ref-v1 v1
    CONVTUI_PROJECTS_DIR=~/projects python scripts/codeif_repo_tables.py \\
        --experiments ref-v0 --scripts ref-v1 --data ../shared/data --out repo-tables

Only L-1 has published static conversations (``n_round``) of repository tasks.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import runpy
import sys
import types
from pathlib import Path

from codeif_repo_inputs import LEVEL_1, check_parser
from codeif_scoring import convtui, score_only

from convtui.core.codeif.data_file import load_codeif_data
from convtui.core.projects.checkout import task_problem

ROUND_LINE = re.compile(r"Round (\d+): Correct = (\d+), Total = (\d+)")


def read_lines(path: Path) -> list[dict]:
    """JSON lines, or one JSON array (some of the published completions files are)."""
    text = path.read_text("utf-8")
    if text.lstrip().startswith("["):
        return list(json.loads(text))
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def mine(path: Path, usable: set[str]) -> list[dict]:
    """The rows of ``path`` on tasks usable here."""
    return [r for r in read_lines(path) if r["namespace"] in usable]


def ia_ca(script: Path, base: list[dict], rounds: list[dict]) -> dict[int, tuple[int, int]]:
    """Their IA_CA.py, unmodified, on ``base`` and ``rounds``: round -> (correct, total)."""
    feed = iter([base, rounds])
    shim = types.ModuleType("utils")
    shim.read_json = lambda path, flag: next(feed)  # type: ignore[attr-defined]
    shim.save_json = lambda *args, **kwargs: None  # type: ignore[attr-defined]
    saved = sys.modules.get("utils")
    sys.modules["utils"] = shim
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            runpy.run_path(str(script), run_name="__main__")
    finally:
        if saved is not None:
            sys.modules["utils"] = saved
        else:
            del sys.modules["utils"]
    return {int(m[1]): (int(m[2]), int(m[3])) for m in ROUND_LINE.finditer(out.getvalue())}


def main() -> None:
    parser = check_parser(__doc__)
    parser.add_argument("--scripts", type=Path, required=True, help="a checkout of branch v1")
    args = parser.parse_args()
    script = args.scripts / "static_conversation" / "repo" / "test" / "IA_CA.py"
    data = args.data / LEVEL_1
    catalog = load_codeif_data(data).catalog
    usable = {t.site.namespace for t in catalog if t.site and task_problem(t) is None}
    root = args.experiments / "repo" / "Experiments" / "level_1"
    args.out.mkdir(parents=True, exist_ok=True)
    summary: dict[str, dict] = {}
    for model_dir in sorted(p.parent for p in root.rglob("n_round/result_result.jsonl")):
        model = str(model_dir.parent.relative_to(root))
        base_dir = model_dir.parent / "base"
        if not (base_dir / "result_result.jsonl").is_file():
            continue
        base = [r for r in read_lines(base_dir / "result_result.jsonl") if r["namespace"] in usable]
        graded = [
            r for r in read_lines(model_dir / "result_result.jsonl") if r["namespace"] in usable
        ]
        asked = [r for r in read_lines(model_dir / "result.jsonl") if r["namespace"] in usable]
        theirs = ia_ca(script, base, graded)
        # Their completions, base then follow-ups, scored by convtui as a static conversation.
        slug = model.replace("/", "_")
        completions = args.out / f"{slug}.jsonl"
        base_asked = mine(base_dir / "result.jsonl", usable)
        completions.write_text(
            "".join(json.dumps(r) + "\n" for r in [*base_asked, *asked]), "utf-8"
        )
        db = args.out / f"{slug}.db"
        done = score_only(completions, data, db)
        if done.returncode != 0:
            raise SystemExit(f"{model}: scoring failed: {done.stderr.strip()}")
        report = json.loads(
            convtui("report", "--db", str(db), "--metrics", "authors", "--json").stdout
        )
        (group,) = report["codeif"]["groups"]
        ours_ca = {r["round"]: (r.get("ca"), r.get("ca_tasks")) for r in group["rounds"]}
        # Their script again, on our verdicts: a row is Pass where our round's CA is 1.
        sessions = {s["task_id"]: s for s in report["codeif"]["sessions"]}
        by_namespace = {t.site.namespace: t.id for t in catalog if t.site}
        mine_base, mine_rounds = [], []
        for row in base:
            session = sessions[by_namespace[row["namespace"]]]
            ok = all(session["rounds"][0]["followed"].values())
            mine_base.append({**row, "Result": "Pass" if ok else "Error"})
        position: dict[str, int] = {}
        for row in graded:
            session = sessions[by_namespace[row["namespace"]]]
            follow_ups = [
                r for r in session["rounds"][1:] if r["instruction"] != "Functionality Extension"
            ]
            k = position.get(row["namespace"], 0)
            position[row["namespace"]] = k + 1
            ok = k < len(follow_ups) and all(follow_ups[k]["followed"].values())
            mine_rounds.append({**row, "Result": "Pass" if ok else "Error"})
        theirs_on_ours = ia_ca(script, mine_base, mine_rounds)
        summary[model] = {
            "tasks": len(base),
            "IA_CA.py on published verdicts": theirs,
            "IA_CA.py on our verdicts": theirs_on_ours,
            "convtui report CA (authors)": ours_ca,
        }
        print(f"{model} ({len(base)} tasks)")
        for k in sorted(theirs):
            ours = ours_ca.get(k)
            shown = f"{100 * ours[0]:.1f}% of {ours[1]}" if ours and ours[0] is not None else "-"
            a, b = theirs[k], theirs_on_ours.get(k, (0, 0))
            print(f"  round {k:2}: published {a[0]}/{a[1]}  ours {b[0]}/{b[1]}  report {shown}")
    (args.out / "tables.json").write_text(json.dumps(summary, indent=1), "utf-8")


if __name__ == "__main__":
    main()
