"""Turn throughput of the live benchmark on the embedded model: turns per minute with one
session at a time and with several concurrent sessions, measured side by side in one run.

Each measurement plays the same tasks (CF,EF:full, a fixed turn limit) into a fresh SQLite
file, so no call is reused from an earlier run.

Run: python scripts/perf/turn_throughput.py [--ids 2,3,8,10,12,16] [--turns 3] [--repeats 3]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from convtui.benchmarks.runs.lifecycle import open_run
from convtui.benchmarks.runs.live import live_run, run_live
from convtui.core.catalog.loaders import load_catalog
from convtui.core.execution.executor import Executor
from convtui.core.models import open_backend
from convtui.core.models.types import GenerationParams
from convtui.core.settings.config import SessionConfig
from convtui.core.settings.omega import FeedbackConfig
from convtui.sessions import Store


async def measure(tasks, turns: int, concurrency: int, max_tokens: int) -> tuple[int, float]:
    config = SessionConfig(
        model="local:smollm2",
        feedback=FeedbackConfig("full"),
        max_turns=turns,
        params=GenerationParams(max_tokens=max_tokens),
    )
    backend = open_backend(config.model)
    await backend.check()
    played = 0

    def count(event) -> None:
        nonlocal played
        played += event.turn is not None

    try:
        with (
            tempfile.TemporaryDirectory() as folder,
            Executor() as executor,
            Store.open(Path(folder) / "throughput.db") as store,
        ):
            executor.warm_up()
            new = live_run(config, [config.feedback], "perf", tasks)
            run_id = open_run(store, new).run_id
            started = time.monotonic()
            await run_live(
                store, run_id, config, tasks, executor, backend, None, concurrency, count
            )
            return played, time.monotonic() - started
    finally:
        await backend.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ids", default="2,3,8,10,12,16")
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--concurrency", default="1,4")
    parser.add_argument("--max-tokens", type=int, default=256)
    args = parser.parse_args()
    tasks = load_catalog("bigcodebench").select(args.ids, None, False)
    levels = [int(c) for c in args.concurrency.split(",")]
    rates: dict[int, list[float]] = {c: [] for c in levels}
    for _ in range(args.repeats):
        for level in levels:  # interleaved, so load changes hit both alike
            turns, seconds = asyncio.run(measure(tasks, args.turns, level, args.max_tokens))
            rates[level].append(60 * turns / seconds)
            print(
                f"concurrency {level}: {turns} turns in {seconds:.1f} s "
                f"= {60 * turns / seconds:.1f} turns/min",
                flush=True,
            )
    base = statistics.median(rates[levels[0]])
    for level in levels:
        median = statistics.median(rates[level])
        print(
            f"median concurrency {level}: {median:.1f} turns/min "
            f"({median / base:.2f}x concurrency {levels[0]})"
        )


if __name__ == "__main__":
    main()
