"""``--executor`` refusals as a user meets them: a wrong value, an unreachable cluster or a
missing Ray are one line (runs on a real cluster: tests/core/test_ray_executor.py)."""

from __future__ import annotations

import sys

import pytest
from support.cli import assert_one_line_error, env, invoke
from support.data import needs_bigcodebench

pytestmark = needs_bigcodebench


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("ray:nowhere", ["--executor", "'ray:nowhere'", "ray:HOST:PORT"]),
        ("dask", ["--executor", "'dask'"]),
    ],
)
def test_a_bad_executor_is_one_line(value, words):
    assert_one_line_error(invoke("doctor", "--ids", "1", "--executor", value), *words)


def test_an_unreachable_cluster_is_one_line_at_once():
    pytest.importorskip("ray")
    done = invoke("check", "--task", "BigCodeBench/1", "--code", "-", "--executor",
                  "ray:127.0.0.1:1", stdin="x = 1\n")  # fmt: skip
    assert_one_line_error(done, "cannot reach the Ray cluster at 127.0.0.1:1", "ray start")


def test_without_ray_installed_the_ray_executor_says_how_to_install_it():
    import subprocess

    # A Python where `import ray` fails, as where the extra is not installed.
    probe = (
        "import sys; sys.modules['ray'] = None; sys.argv = ['convtui', *sys.argv[1:]]\n"
        "from convtui.cli import app; app()"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, "doctor", "--ids", "1", "--executor", "ray"],
        capture_output=True,
        text=True,
        env=env(),
        timeout=120,
        check=False,
    )
    assert_one_line_error(done, 'pip install "convtui[ray]"')
