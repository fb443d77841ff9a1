"""scripts/build_progress.py, which scripts/install-llama.sh pipes the llama.cpp build through: a
build that says nothing for minutes still gets a line every interval saying how far it is, and
everything it printed is kept in the log."""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "build_progress.py"


def test_a_quiet_build_gets_a_line_each_interval_with_what_is_compiled(tmp_path):
    log = tmp_path / "build.log"
    process = subprocess.Popen(
        [sys.executable, str(SCRIPT), "--log", str(log), "--every", "0.2"],
        stdin=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdin is not None
    time.sleep(0.7)  # nothing said yet: the lines say it is preparing
    process.stdin.write("*** Building project with Ninja...\n[3/160] Building C object ggml.c.o\n")
    process.stdin.flush()
    time.sleep(0.7)  # silent again, as during a long compile
    process.stdin.write("[160/160] Linking CXX shared library libllama.so\n")
    process.stdin.close()
    assert process.stderr is not None
    err = process.stderr.read()
    process.wait(timeout=30)
    assert process.returncode == 0
    lines = err.splitlines()
    assert any("preparing" in line for line in lines), err
    assert any("3/160 compiled" in line and "ggml.c.o" in line for line in lines), err
    assert all(line.startswith("  still building: ") for line in lines), err
    assert log.read_text().endswith("[160/160] Linking CXX shared library libllama.so\n")


def test_make_style_percentages_are_read_too(tmp_path):
    process = subprocess.Popen(
        [sys.executable, str(SCRIPT), "--log", str(tmp_path / "log"), "--every", "0.2"],
        stdin=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdin is not None
    process.stdin.write("[ 42%] Building C object\n")
    process.stdin.flush()
    time.sleep(0.7)
    process.stdin.close()
    assert process.stderr is not None
    err = process.stderr.read()
    process.wait(timeout=30)
    assert "42% built" in err, err


@pytest.mark.skipif(platform.machine() not in ("x86_64", "amd64"), reason="the AVX2 build path")
def test_a_failed_build_shows_its_last_lines_and_where_its_log_is(tmp_path):
    """Fault injected: the package index is a closed port on loopback, so pip fails at once; the
    script must say so and exit non-zero, not stay silent or pass."""
    environment = {
        **os.environ,
        "XDG_CACHE_HOME": str(tmp_path / "cache"),  # no wheel built before
        "PIP_INDEX_URL": "http://127.0.0.1:9/simple",
        "PIP_FIND_LINKS": "",
        "PIP_RETRIES": "0",
        "PIP_TIMEOUT": "2",
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
    }
    done = subprocess.run(
        ["bash", str(SCRIPT.parent / "install-llama.sh")],
        env=environment,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 1, done.stderr
    assert "a line every 30 s says how far it is" in done.stderr
    assert "the llama-cpp-python build failed: its whole output is in " in done.stderr
    log = Path(done.stderr.rsplit("its whole output is in ", 1)[1].strip())
    assert "llama-cpp-python" in log.read_text()
    log.unlink()
