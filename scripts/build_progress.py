"""Progress for a long, quiet build: reads a build's output on stdin (pip's verbose output of a
CMake/Ninja build such as llama-cpp-python's), keeps all of it in ``--log``, and prints one
line to stderr every ``--every`` seconds: what has been compiled so far (Ninja's ``[12/160]``
or make's ``[ 35%]``), the time elapsed, and the build's last line. A person watching
`bash scripts/install-llama.sh` can then tell a build that is working from one that hangs:
the compile takes 6 minutes on an idle 2-core machine and over half an hour on a busy one.

It exits 0 once stdin closes: the build's own status comes through the caller's
``set -o pipefail``.

Run: some-build 2>&1 | python scripts/build_progress.py --log build.log [--every 30]
"""

from __future__ import annotations

import argparse
import re
import sys
import threading
import time
from pathlib import Path

NINJA = re.compile(r"^\s*\[(\d+)/(\d+)\]")
MAKE = re.compile(r"^\s*\[\s*(\d+)%\]")


class State:
    """What the build has said so far, shared between the reader and the clock."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.done = 0
        self.total = 0
        self.percent: int | None = None
        self.last = ""
        self.closed = threading.Event()

    def read(self, line: str) -> None:
        with self.lock:
            text = line.strip()
            if text:
                self.last = text
            if m := NINJA.match(line):
                self.done, self.total = int(m[1]), int(m[2])
            elif m := MAKE.match(line):
                self.percent = int(m[1])

    def line(self, elapsed: float) -> str:
        with self.lock:
            if self.total:
                step = f"{self.done}/{self.total} compiled"
            elif self.percent is not None:
                step = f"{self.percent}% built"
            else:
                step = "preparing"
            last = self.last if len(self.last) <= 70 else self.last[:67] + "..."
        minutes, seconds = divmod(int(elapsed), 60)
        return f"  still building: {step}, {minutes}m{seconds:02d}s elapsed · {last}"


def pump(state: State, log: Path) -> None:
    with log.open("w", encoding="utf-8", errors="replace") as out:
        for line in sys.stdin:
            out.write(line)
            state.read(line)
    state.closed.set()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--log", type=Path, required=True, help="where all the output goes")
    parser.add_argument("--every", type=float, default=30.0, help="seconds between lines")
    args = parser.parse_args()
    state = State()
    started = time.monotonic()
    reader = threading.Thread(target=pump, args=(state, args.log), daemon=True)
    reader.start()
    while not state.closed.wait(args.every):
        print(state.line(time.monotonic() - started), file=sys.stderr, flush=True)
    reader.join()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
