"""llama-cpp-python, imported the one way convtui imports it: with the OpenMP threads that
run llama.cpp's batches waiting passively for one another, unless the environment says
otherwise.

OpenMP's default has a waiting thread spin for its partner. convtui's model always shares
the cores: with the executor's runs, with a study's apps, with other sessions' calls. A
spinning thread then burns the CPU its partner needs to arrive. With two other processes busy
on 2 cores, a 520-token prompt on the embedded SmolLM2 took a median 16.9 core-s (17.2 s)
under the default and 5.1 core-s (6.1 s) passive; on idle cores the two were within 5 %
(scripts/perf/model_contention.py). libgomp reads the setting once, when llama.cpp's library
loads, so it is set before the first import."""

from __future__ import annotations

import os
from types import ModuleType

WAIT_POLICY = ("OMP_WAIT_POLICY", "passive")


def import_llama_cpp() -> ModuleType:
    """The ``llama_cpp`` module (ImportError where it is not installed)."""
    os.environ.setdefault(*WAIT_POLICY)
    import llama_cpp

    return llama_cpp
