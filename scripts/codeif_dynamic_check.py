"""Play CodeIF-Bench's own dynamic conversation against the answers a `bench codeif --mode
dynamic --protocol codeif` run recorded, and compare it turn by turn with the run, and its
report.py with `convtui report --metrics authors`.

The authors' script (zhu-zhu-ding/CodeIF-Bench, branch v1,
``dynamic_conversation/multi_turn_function_eval.py`` and ``report.py``), from a checkout you
make::

    git clone https://github.com/zhu-zhu-ding/CodeIF-Bench ref
    git -C ref worktree add ../ref-v1 v1
    python scripts/codeif_dynamic_check.py --scripts ref-v1 --db codeif.db --run RUN

``dynamic_test_dialogue`` runs unmodified: only its ``inference`` is replaced, by one that
answers the script's k-th model call of a task with the reply the run recorded at turn k (its
model-loading imports, torch, transformers and openai, are stubbed: only ``inference`` uses
them). So the script itself chooses every turn, writes every message and checks every answer
with its own ``test_completions`` (``python`` in a subprocess, no sandbox: use it only on code
you trust, a run of the scripted ``mock:`` model, say). Compared, per session: the turns (kind
and instruction), every message the model was sent (their temporary file's random name read
as ours, and without the position lines, ``^^^``, that a Python newer than their 3.9 prints),
each turn's code and its IA, CA, IFR and IFE; then ``report.py``'s printed lines with ours.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import types
from pathlib import Path

from convtui.core.codeif.authors_dynamic import SCRIPT_PATH
from convtui.sessions import Store

TEMP_FILE = re.compile(r"/tmp/tmp\w{8}\.py")
POSITION_LINE = re.compile(r"^[ \t]*[\^~]+[ \t]*$")


def their_module(path: Path, name: str) -> dict:
    """A script of theirs loaded with its model imports stubbed."""
    for module in ("torch", "transformers", "openai", "tqdm", "utils"):
        sys.modules.setdefault(module, types.ModuleType(module))
    stubs = {
        "transformers": ("AutoTokenizer", "AutoModelForCausalLM"),
        "openai": ("OpenAI",),
        "utils": ("read_json", "save_json"),
    }
    for module, names in stubs.items():
        for attr in names:
            setattr(sys.modules[module], attr, None)
    sys.modules["tqdm"].tqdm = lambda items: items  # type: ignore[attr-defined]
    found: dict = {"__name__": name}
    source = path.read_text("utf-8").split("###input file path###")[0]  # report.py's main
    exec(compile(source, str(path), "exec"), found)
    return found


def normal(text: str) -> str:
    text = TEMP_FILE.sub(SCRIPT_PATH, text)
    return "\n".join(line for line in text.split("\n") if not POSITION_LINE.match(line))


def ours(db: Path, run: str) -> dict:
    """``convtui report --metrics authors --json`` of the run."""
    with tempfile.TemporaryDirectory() as out:
        done = subprocess.run(
            [sys.executable, "-m", "convtui", "report", "--db", str(db), "--run", run,
             "--json", "--metrics", "authors", "--out", out],
            check=True, capture_output=True, text=True,
        )  # fmt: skip
    return json.loads(done.stdout)["codeif"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scripts", type=Path, required=True, help="checkout of branch v1")
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--run", required=True, help="a dynamic --protocol codeif run of --db")
    args = parser.parse_args()
    folder = args.scripts / "dynamic_conversation"
    script = their_module(folder / "multi_turn_function_eval.py", "multi_turn_function_eval")
    report = their_module(folder / "report.py", "report")
    # Their test_completions runs "python": this interpreter (mccabe, pycodestyle installed).
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    with Store.open(args.db) as store:
        data_path = Path(store.run(args.run).settings["data"]["path"])
        rows = {f"CodeIF/{r['task_id']}": r for r in map(json.loads, data_path.open())}
        sessions = [(s, store.load_turns(s.id)) for s in store.run_sessions(args.run)]
    reported_json = ours(args.db, args.run)
    reported = {s["session_id"]: s for s in reported_json["sessions"]}
    same = True
    logs = []
    for session, turns in sessions:
        calls: list[list[dict]] = []

        def inference(_args, messages, turns=turns, calls=calls):
            calls.append([dict(m) for m in messages])
            k = len(calls) - 1
            return turns[k].reply if k < len(turns) else ""

        script["inference"] = inference
        log = script["dynamic_test_dialogue"](None, rows[session.task_id])
        logs.append(log)
        theirs_turns = [
            ("feedback" if c[-1]["content"].startswith("Please note") else "instruction",
             t["results"][0]["instruction_type"])
            for c, t in zip(calls, log["turns"], strict=True)
        ]  # fmt: skip
        our_turns = [tuple(t.received.user_source.split(":")[1:]) for t in turns]
        messages = [normal(m["content"]) for m in log["dialogue"]]
        our_messages = [normal(m.content) for m in turns[-1].prompt] + [normal(turns[-1].reply)]
        scores = reported[session.id]["scores"]["turns"]
        checks = {
            "turns": theirs_turns == our_turns,
            "messages": messages == our_messages,
            "code": [t["code"] for t in log["turns"]] == [t.code for t in turns],
            "metrics": [(t["IA"], t["CA"], t["IFR"], t["IFE"]) for t in log["turns"]]
            == [(t["ia"], t["ca"], t["ifr"], t["ife"]) for t in scores],
        }
        same &= all(checks.values())
        verdicts = " ".join(f"{k}={'equal' if v else 'DIFFER'}" for k, v in checks.items())
        print(session.task_id, verdicts)
        pairs = zip(messages, our_messages, strict=False)
        for i, (theirs_message, our_message) in enumerate(pairs):
            if theirs_message != our_message:
                print(f"  message {i + 1} differs:")
                print(f"  theirs {theirs_message!r}\n  ours   {our_message!r}")
                break
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        report["print_metrics_summary"](report["compute_pairwise_metrics"](logs))
    (group,) = [g for g in reported_json["groups"] if g["metrics"] == "authors"]
    our_lines = [
        f"{r['turns']}: IA={100 * r['ia']:.1f}, IFR={100 * r['ifr']:.1f}, "
        f"CA={100 * r['ca']:.1f}, IFE={100 * r['ife']:.1f}"
        for r in group["rounds"]
    ]
    their_lines = [line for line in printed.getvalue().splitlines() if line]
    agree = their_lines == our_lines
    same &= agree
    print("report.py:", "equal" if agree else "DIFFER")
    for theirs_line, our_line in zip(their_lines, our_lines, strict=False):
        print(f"  theirs {theirs_line}\n  ours   {our_line}")
    sys.exit(0 if same else 1)


if __name__ == "__main__":
    main()
