"""The capacity sheet's arithmetic (scripts/perf/capacity.py) on fixed inputs, against
numbers worked out by hand."""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import replace
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "perf" / "capacity.py"
_spec = importlib.util.spec_from_file_location("perf_capacity", SCRIPT)
assert _spec is not None and _spec.loader is not None
capacity = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = capacity  # its dataclasses look their module up there
_spec.loader.exec_module(capacity)

# A line for each part of the sheet (execution, tokens a call, calls a session, rates), which
# the formatter would spread one value a line.
INPUTS = capacity.SweepInputs(
    exec_full_core_s=2.0, exec_raise_core_s=0.1, full_run_share=0.5,
    code_out=500, code_in=1500, turn0_in=250, sim_out=200, sim_in=2000,
    extra_code_calls=0.0, generations_per_session=6.0,
    model_tps=2000, simulator_tps=2000, request_tps=25,
)  # fmt: skip


def test_upper_bound_sweep_by_hand():
    got = capacity.sweep(INPUTS)
    # 1,140 tasks × 9 Ω = 10,260 sessions × 11 generations, one execution each
    assert got["sessions"] == 10_260
    assert got["executions"] == got["generations"] == 112_860
    assert got["code_calls"] == 112_860
    # the 6 Ω with verbal feedback × 10 feedback turns
    assert got["simulator_calls"] == pytest.approx(1140 * 6 * 10)
    full, cheap, mix = (got["execution"][k] for k in ("full", "raise", "mix"))
    assert full["core_s"] == pytest.approx(225_720)
    assert (full["cores"], full["nodes"]) == (63, {"16": 4, "64": 1})  # 62.7 core-hours
    assert (cheap["cores"], cheap["nodes"]) == (4, {"16": 1, "64": 1})  # 3.1
    assert mix["core_s_per_execution"] == pytest.approx(1.05)
    assert (mix["cores"], mix["nodes"]) == (33, {"16": 3, "64": 1})  # 32.9
    # 56.43 M output tokens in an hour
    assert got["model"]["output_tps"] == pytest.approx(15_675)
    assert got["model"]["replicas"] == 8
    assert got["model"]["input_tps"] == pytest.approx((10_260 * 250 + 102_600 * 1500) / 3600)
    assert got["simulator"]["output_tps"] == pytest.approx(3800)
    assert got["simulator"]["replicas"] == 2
    # 11 × 1.05 s of execution + 11 × 500/25 s of code + 6.67 × 200/25 s of simulator
    assert got["session_s"] == pytest.approx(11.55 + 220 + 68_400 / 10_260 * 8)
    assert got["concurrency"] == 812


def test_early_stop_sweep_and_rates():
    got = capacity.sweep(INPUTS, early_stop=True)
    assert got["executions"] == pytest.approx(10_260 * 6)
    assert got["simulator_calls"] == pytest.approx(10_260 * 5 * 6 / 9)
    assert capacity.expected_generations(0.0, 0.0, 10) == 11
    assert capacity.expected_generations(1.0, 0.3, 10) == 1
    # 1 + 0.65 × (1 − 0.92¹⁰) / 0.08
    assert capacity.expected_generations(0.35, 0.08, 10) == pytest.approx(5.5956, abs=1e-4)


def test_timeouts_hold_a_slot_for_the_whole_run_deadline():
    got = capacity.sweep(replace(INPUTS, timeout_share=0.01, timeout_core_s=240))
    # 0.5 × 2 s + 0.01 × 240 s + 0.49 × 0.1 s
    assert got["execution"]["mix"]["core_s_per_execution"] == pytest.approx(3.449)
    assert got["execution"]["mix"]["cores"] == 109  # 108.1 core-hours
    assert got["cores_per_timeout_percent"] == pytest.approx(75.24)
