"""BigCodeBench's own ``evaluate``, timed on the same 60 tasks as convtui's executor.

It runs in the interpreter of a throwaway virtual environment that has ``bigcodebench``
installed (``--bcb-python``), as a user would run it: ``python -m bigcodebench.evaluate
--execution local --parallel JOBS``, its start-up (importing its providers) counted. What it
evaluates lies in a folder of its own made once per subset: the subset's rows of the dataset
convtui reads (``BIGCODEBENCH_OVERRIDE_PATH``, so nothing is downloaded and the dataset's hash,
the key of its ground-truth cache, is the subset's own) and the samples, one per task. Each
run gets a fresh results path, since ``evaluate`` loads an earlier run's results instead of
running again.

``--no_gt`` skips its ground-truth pass, which the solutions that raise at once do not need
(the pass only sets each task's time limit, from the ground truth's run time; without it a task
gets 20 s); it is therefore used for those solutions only.

Setting up the environment (beside convtui's own, whose task libraries it shares through a
``.pth`` file, so that both run the same library versions)::

    SITE='import site; print(site.getsitepackages()[0])'
    python -m venv /tmp/bcb && python -c "$SITE" > "$(/tmp/bcb/bin/python -c "$SITE")/libs.pth"
    /tmp/bcb/bin/pip install bigcodebench==0.2.5 --no-deps
    /tmp/bcb/bin/pip install appdirs fire multipledispatch pqdm tempdir termcolor tree_sitter \
        tree-sitter-python wget datasets gradio_client e2b httpx transformers
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import tempfile
import time
from collections import Counter
from pathlib import Path


class BcbEvaluate:
    """One subset's tasks and samples laid out for ``bigcodebench.evaluate``."""

    def __init__(self, python: str, dataset: Path, ids: list[str], jobs: int) -> None:
        self.python = python
        self.ids = ids
        self.jobs = jobs
        self.folder = Path(tempfile.mkdtemp(prefix="bcb_evaluate_"))
        wanted = set(ids)
        opener = gzip.open if dataset.suffix == ".gz" else open
        with opener(dataset, "rt", encoding="utf-8") as source:
            rows = [line for line in source if json.loads(line)["task_id"] in wanted]
        (self.folder / "dataset.jsonl").write_text("".join(rows), encoding="utf-8")
        self._runs = 0

    def run(self, solutions: dict[str, str], no_gt: bool) -> dict:
        """Evaluate ``solutions`` (task id to code); the wall time of the whole command and
        the statuses it gave."""
        self._runs += 1
        samples = self.folder / f"run{self._runs}.jsonl"
        samples.write_text(
            "".join(json.dumps({"task_id": i, "solution": solutions[i]}) + "\n" for i in self.ids),
            encoding="utf-8",
        )
        argv = [
            self.python, "-m", "bigcodebench.evaluate", "--split", "complete", "--subset",
            "full", "--samples", str(samples), "--execution", "local", "--parallel",
            str(self.jobs), "--selective_evaluate", ",".join(self.ids),
            *(["--no_gt"] if no_gt else []),
        ]  # fmt: skip
        env = {
            **os.environ,
            "BIGCODEBENCH_OVERRIDE_PATH": str(self.folder / "dataset.jsonl"),
            # Its ground-truth cache (and anything else it keeps) stays in this folder.
            "XDG_CACHE_HOME": str(self.folder / "cache"),
        }
        started = time.monotonic()
        done = subprocess.run(argv, env=env, cwd=self.folder, capture_output=True, check=False)
        wall = time.monotonic() - started
        if done.returncode != 0:
            tail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:]
            raise SystemExit(f"bigcodebench.evaluate failed: {' '.join(tail)}")
        results = json.loads((self.folder / f"run{self._runs}_eval_results.json").read_text())
        statuses = Counter(r[0]["status"] for r in results["eval"].values())
        return {"wall_s": wall, "verdicts": dict(statuses)}
