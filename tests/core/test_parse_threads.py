"""core/syntax.py: parsing from several threads at once, while the collector runs finalisers
that let other threads in, never fails. On CPython 3.11 the same load through ``ast.parse``
directly fails within a second with ``SystemError: AST constructor recursion depth mismatch``
(python/cpython#106905), as a sweep's event loop and executor threads once did.

The threads parse for a while (LOAD_S), not a number of times: the load hands the GIL over
thousands of times, and on a loaded machine each hand-off waits for the other thread to be
scheduled, so a fixed number of parses took from one second to over two minutes in a suite."""

from __future__ import annotations

import gc
import threading
import time

from support.threads import run_together

from convtui.core.syntax import parse_python

# Small, so that a parse under load outlasts LOAD_S by little (a CI run's parse of 100 such
# functions made a one-second load take 27 s); 30 still fail through ast.parse every time.
FUNCTIONS = 30
SOURCE = "\n".join(
    f"def f{i}(x):\n    return [y + {i} for y in range(x) if (y % 3 or y % 5) and x]"
    for i in range(FUNCTIONS)
)
LOAD_S = 1.0


class _LetsOthersIn:
    """Cyclic garbage whose finaliser gives up the GIL: the collector runs it inside whatever
    allocation triggered it, an AST constructor's included."""

    def __init__(self) -> None:
        self.me = self

    def __del__(self) -> None:
        time.sleep(0)


def test_threads_parse_at_once_while_finalisers_run() -> None:
    errors: list[BaseException] = []
    stop = threading.Event()

    def litter() -> None:
        while not stop.is_set():
            _LetsOthersIn()
            time.sleep(0)

    def parse() -> None:
        until = time.monotonic() + LOAD_S
        while True:  # at least once
            try:
                tree = parse_python(SOURCE)
            except SystemError as exc:
                errors.append(exc)
                return
            assert len(tree.body) == FUNCTIONS
            if time.monotonic() > until:
                return

    thresholds = gc.get_threshold()
    # Frozen, what the worker process made before this test is left out of the frequent
    # collections: in a suite's worker, scanning it on every older-generation collection took
    # 50 s; the collections of this test's own litter still run finalisers mid-parse.
    gc.freeze()
    gc.set_threshold(100, 10, 10)
    try:
        litterer = threading.Thread(target=litter)
        litterer.start()
        run_together(*[parse] * 3)
    finally:
        stop.set()
        litterer.join()
        gc.set_threshold(*thresholds)
        gc.unfreeze()
    assert errors == []
