"""The served load generator (scripts/perf/served_load.py) against a real `convtui serve`:
two annotators by protocol for a few seconds, beside someone holding hundreds of
connections to the server (connection_attack.py); every turn they played is recorded, nothing
failed, and the measures are there. No timing bound is asserted: the numbers are the
machine's."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts" / "perf"))

import served_load

pytestmark = pytest.mark.timeout(120)


def test_two_annotators_beside_an_attack_have_every_turn_recorded() -> None:
    pace = served_load.Pace(keys_per_s=12.0, think_s=0.3)
    run = served_load.one_run(2, 4.0, pace=pace, reply_s=0.05, sample_s=0.5, attack=300)
    assert run["errors_on_screen"] == [], run
    assert run["errors_in_server_log"] == 0, run["server_log_errors"]
    assert run["sessions_with_errors"] == 0
    assert run["turns_played"] >= 2  # each annotator sent feedback at least once
    assert run["turns_played"] == run["turns_recorded"]
    assert run["keys"] > 0
    assert 0 < run["echo_median_ms"] <= run["echo_p95_ms"]
    assert run["rss_total_mb"] > 0 and run["app_rss_mb"] > 0
    assert run["server_cpu_percent"] > 0
    assert served_load.ok(run)
    # The attacker held more connections than loopback may (128 places): the server pushed
    # its oldest out, again and again, and said so in a few lines.
    assert run["attack_connections"] > 300 and run["attack_closed_by_server"] > 0
    assert run["server_log_lines"] < 60
    summary = served_load.level([run])
    assert summary["ok"] and summary["recorded_all"] and summary["runs"] == 1
