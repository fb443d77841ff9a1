"""What the embedded model's prompts cost when the cores are shared, under both of OpenMP's
wait policies: the measurement behind core/models/llama_runtime.py, which has llama.cpp's
threads wait passively unless the environment says otherwise.

--busy processes spin on the CPU for the whole run (as the executor's runs, a study's apps
or another session's calls would). Then, policy after policy in turn (--rounds times each),
a new interpreter loads SmolLM2 with the policy in its environment and answers --calls
completions of a prompt of about 520 tokens, each prompt new (nothing of it cached), and
reports each call's wall time and its process's CPU time. The script prints the medians per
policy and their ratio (libgomp's default, which spins a while, over passive). --busy 0
measures idle cores.

Run: python scripts/perf/model_contention.py [--busy 2] [--rounds 2] [--calls 3] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

# "default": OMP_WAIT_POLICY unset, libgomp's own choice (spin a while, then sleep).
POLICIES = ("default", "passive")

# llama_cpp imported directly, not through convtui (which would set the passive policy).
CALLS = """
import json, sys, time
import llama_cpp
from convtui.core.models.llama_local import smollm2_path
llama = llama_cpp.Llama(model_path=str(smollm2_path()), n_ctx=4096, verbose=False)
prompt = "Write a python function that sorts a list of numbers and explains. " * 40
found = []
for call in range(int(sys.argv[1])):
    cpu, wall = time.process_time(), time.perf_counter()
    llama.create_completion(f"{call} {prompt}", max_tokens=32, temperature=0, seed=0)
    found.append([time.perf_counter() - wall, time.process_time() - cpu])
print(json.dumps(found))
"""


@contextmanager
def busy(processes: int) -> Iterator[None]:
    spinning = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(processes)
    ]
    try:
        yield
    finally:
        for process in spinning:
            process.kill()
            process.wait()


def calls(policy: str, count: int) -> list[list[float]]:
    """(wall s, CPU s) of each of ``count`` calls, in a new interpreter with ``policy``."""
    environ = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    if policy != "default":
        environ["OMP_WAIT_POLICY"] = policy
    done = subprocess.run(
        [sys.executable, "-c", CALLS, str(count)],
        capture_output=True,
        text=True,
        env=environ,
        check=True,
    )
    found: list[list[float]] = json.loads(done.stdout)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--busy", type=int, default=2, help="processes spinning meanwhile")
    parser.add_argument("--rounds", type=int, default=2, help="interpreters per policy")
    parser.add_argument("--calls", type=int, default=3, help="completions per interpreter")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    seen: dict[str, list[list[float]]] = {policy: [] for policy in POLICIES}
    with busy(args.busy):
        for _ in range(args.rounds):
            for policy in POLICIES:
                seen[policy].extend(calls(policy, args.calls))
    medians = {
        policy: {
            "wall_s": statistics.median(wall for wall, _ in found),
            "cpu_s": statistics.median(cpu for _, cpu in found),
        }
        for policy, found in seen.items()
    }
    ratio = {key: medians["default"][key] / medians["passive"][key] for key in ("wall_s", "cpu_s")}
    if args.json:
        policies = {p: {**medians[p], "calls": seen[p]} for p in POLICIES}
        print(json.dumps({"busy": args.busy, "policies": policies, "default_over_passive": ratio}))
        return
    print(f"{args.busy} busy processes; median per call of a ~520-token prompt:")
    for policy in POLICIES:
        row = medians[policy]
        print(f"  {policy:8} wall {row['wall_s']:.2f} s  CPU {row['cpu_s']:.2f} s")
    print(f"  default / passive: wall {ratio['wall_s']:.2f}x, CPU {ratio['cpu_s']:.2f}x")


if __name__ == "__main__":
    main()
