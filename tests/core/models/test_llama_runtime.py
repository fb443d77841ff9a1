"""llama.cpp is loaded with its OpenMP threads waiting passively (core/models/llama_runtime.py)
unless the person's environment says otherwise; libgomp reads the setting when the library
loads, so it must be in the environment before the first import. Each check runs in a new
interpreter, whose environment lacks the setting this test process has (tests/conftest.py)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

# The embedded model loaded as a session loads it: the policy in force when it loaded.
LOADS = """
import os, sys
from convtui.core.models.llama_local import load_model, smollm2_path
assert "llama_cpp" not in sys.modules
load_model(smollm2_path(), 512, 1)
print(os.environ.get("OMP_WAIT_POLICY"))
"""


def _policy(script: str, given: str | None) -> str:
    environ = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    if given is not None:
        environ["OMP_WAIT_POLICY"] = given
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env=environ,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.mark.parametrize(("given", "kept"), [(None, "passive"), ("active", "active")])
def test_the_embedded_model_loads_with_passive_threads_unless_told_otherwise(
    given: str | None, kept: str
) -> None:
    pytest.importorskip("llama_cpp")
    assert _policy(LOADS, given) == kept


def test_reading_a_gguf_chat_template_imports_llama_cpp_the_same_way() -> None:
    pytest.importorskip("llama_cpp")
    script = (
        "import os\n"
        "from convtui.core.models.chat_template import _from_gguf_file\n"
        "from convtui.core.models.llama_local import smollm2_path\n"
        "_from_gguf_file(smollm2_path())\n"
        "print(os.environ.get('OMP_WAIT_POLICY'))\n"
    )
    assert _policy(script, None) == "passive"
