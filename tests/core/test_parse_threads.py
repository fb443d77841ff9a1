"""core/syntax.py: parsing from several threads at once, while the collector runs finalisers
that let other threads in, never fails. On CPython 3.11 the same load through ``ast.parse``
directly fails within a second with ``SystemError: AST constructor recursion depth mismatch``
(python/cpython#106905), as a sweep's event loop and executor threads once did.

The load runs in an interpreter of its own: in a suite's worker, threads that earlier tests
left running (a Ray client's, a served app's) took the GIL at each of the load's thousands of
hand-offs, and the test took 50 s instead of one."""

from __future__ import annotations

import subprocess
import sys

LOAD = """
import gc, sys, threading, time
from {module} import {function} as parse

SOURCE = "\\n".join(
    f"def f{{i}}(x):\\n    return [y + {{i}} for y in range(x) if (y % 3 or y % 5) and x]"
    for i in range(100)
)


class LetsOthersIn:
    # Cyclic garbage whose finaliser gives up the GIL: the collector runs it inside whatever
    # allocation triggered it, an AST constructor's included.
    def __init__(self):
        self.me = self

    def __del__(self):
        time.sleep(0)


errors = []
stop = threading.Event()


def litter():
    while not stop.is_set():
        LetsOthersIn()
        time.sleep(0)


def parse_some():
    for _ in range(4):
        try:
            tree = parse(SOURCE)
        except SystemError as exc:
            errors.append(exc)
            return
        assert len(tree.body) == 100


gc.set_threshold(100, 10, 10)
litterer = threading.Thread(target=litter)
litterer.start()
parsers = [threading.Thread(target=parse_some) for _ in range(3)]
for thread in parsers:
    thread.start()
for thread in parsers:
    thread.join()
stop.set()
litterer.join()
print(len(errors), *{{str(exc) for exc in errors}})
"""


def parse_under_load(module: str, function: str) -> str:
    """What the load printed: the number of failed parses, then their messages."""
    done = subprocess.run(
        [sys.executable, "-c", LOAD.format(module=module, function=function)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_threads_parse_at_once_while_finalisers_run() -> None:
    assert parse_under_load("convtui.core.syntax", "parse_python") == "0"
