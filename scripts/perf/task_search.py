"""Task picker search speed: the picker searches on every keystroke on the UI thread, so a
search must stay far under a frame (~16 ms) over the whole catalog (1,190 tasks).

Reports the median and worst of --repeats timings for building the index and for a set of
queries, fresh (term cache cleared) and repeated.

Run: python scripts/perf/task_search.py [--repeats 100] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from convtui.core.catalog.loaders import load_catalog
from convtui.core.catalog.search import TaskIndex

QUERIES = ("123", "pandas csv", "data file", "lib:numpy plot", "a e", "os.path json", "regex")


def _timed(fn, repeats: int) -> list[float]:
    out = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=100)
    parser.add_argument("--json", dest="json_out")
    args = parser.parse_args()
    tasks = list(load_catalog("all", None))
    build = _timed(lambda: TaskIndex(tasks), max(5, args.repeats // 10))
    rows = {"build_index": build}
    for query in QUERIES:
        fresh = []
        for _ in range(max(5, args.repeats // 10)):
            index = TaskIndex(tasks)  # a new index: no term of this query is cached
            start = time.perf_counter()
            index.search(query, None)
            fresh.append(time.perf_counter() - start)
        rows[f"fresh {query!r}"] = fresh
        rows[f"repeat {query!r}"] = _timed(lambda q=query, i=index: i.search(q, None), args.repeats)
    report = {}
    print(f"{len(tasks)} tasks; milliseconds (median / max)")
    for name, timings in rows.items():
        median_ms, max_ms = statistics.median(timings) * 1e3, max(timings) * 1e3
        report[name] = {"median_ms": round(median_ms, 3), "max_ms": round(max_ms, 3)}
        print(f"  {name:24} {median_ms:8.3f} {max_ms:8.3f}")
    if args.json_out:
        with open(args.json_out, "w") as out:
            json.dump({"tasks": len(tasks), "results": report}, out, indent=2)


if __name__ == "__main__":
    main()
