"""What one served app holds and how long it outlives its socket (issue 48, point 2): a real
`convtui serve` on loopback with the scripted ``mock:`` model (or ``--model``), its app driven
through the app socket's protocol by hand, as tests/tui/test_served_app_bounds.py drives it.

- ``peak``: an app played through ``--turns`` turns; its peak data (VmData, what the memory
  limit counts) and resident size (VmHWM), sampled every 50 ms.
- ``paste``: 20 pastes of 40 KB of short lines into the composer, one each 0.5 s; the app's
  resident size before and after.
- ``flood``: keys, not a paste, at the server's input rate for ``--seconds``, then the socket
  closed; seconds from the close to the app's end.
- ``vanish``: pastes, then the client neither reads, writes nor closes (a browser whose
  network dropped without a goodbye); seconds from the last message to the app's end (the
  server's heartbeat finds it).

Run from the clone (needs the dev extra)::

    python scripts/perf/app_bounds.py peak [--turns 3] [--model local:smollm2]
    python scripts/perf/app_bounds.py paste|flood|vanish [--seconds 4]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# The served study and socket clients the tests use (tests/support), not a second copy.
sys.path.insert(0, str(ROOT / "tests"))

from support.browser import ServedStudy, served_study  # noqa: E402
from support.raw_client import app_pids, client_frame, handshake  # noqa: E402
from support.raw_screen import ScreenApp  # noqa: E402
from support.studies import scripted_study  # noqa: E402

PASTE_START, PASTE_END = "\x1b[200~", "\x1b[201~"


class TallApp(ScreenApp):
    SIZE = (120, 45)  # the composer shows under the code and the tests


def status_mib(pid: int) -> dict[str, int]:
    """VmData, VmHWM and VmRSS of ``pid`` in MiB; empty once it has ended."""
    found: dict[str, int] = {}
    try:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError:
        return found
    for line in lines:
        key, _, value = line.partition(":")
        if key in ("VmData", "VmHWM", "VmRSS"):
            found[key] = int(value.split()[0]) // 1024
    return found


def until_gone(served: ServedStudy, pid: int, since: float, most_s: float = 180.0) -> float:
    while pid in app_pids(served) and time.monotonic() - since < most_s:
        time.sleep(0.05)
    return time.monotonic() - since


async def opened(served: ServedStudy) -> tuple[TallApp, int]:
    app = await TallApp.open(served, "token-of-ana", "width=120&height=45")
    await app.showing("waiting for your feedback", timeout=120)
    return app, app_pids(served)[0]


async def peak(served: ServedStudy, turns: int) -> dict[str, object]:
    highest: dict[str, int] = {}
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            for pid in app_pids(served):
                for key, value in status_mib(pid).items():
                    highest[key] = max(highest.get(key, 0), value)
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    app, _pid = await opened(served)
    try:
        for turn in range(turns):
            await app.showing(f"turn {turn} · ", "waiting for your feedback", timeout=300)
            words = f"please fix turn {turn}"
            await app.send("stdin", words)
            await app.showing(words)
            await app.send("stdin", "\n")  # ctrl+j sends
        await app.showing("turn limit reached", timeout=300)
    finally:
        done.set()
        await app.close()
    return {"peak_data_mib": highest.get("VmData"), "peak_rss_mib": highest.get("VmHWM")}


async def paste(served: ServedStudy) -> dict[str, object]:
    app, pid = await opened(served)
    before = status_mib(pid)["VmRSS"]
    lines = "ab\n" * 13_000  # 39 KB, about 52 KB once JSON-escaped: under the message cap
    try:
        for _ in range(20):
            await app.send("stdin", PASTE_START + lines + PASTE_END)
            await asyncio.sleep(0.5)
        after = status_mib(pid)["VmRSS"]
    finally:
        await app.close()
    return {"rss_before_mib": before, "rss_after_20_pastes_mib": after}


async def flood(served: ServedStudy, seconds: float) -> dict[str, object]:
    app, pid = await opened(served)
    keys = "abcdefghij" * 3000
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not app.closed.is_set():
        await app.socket.send_str(json.dumps(["stdin", keys]))
        await asyncio.sleep(0.25)
    closed = time.monotonic()
    await app.close()
    ended = await asyncio.to_thread(until_gone, served, pid, closed)
    return {"flood_s": seconds, "app_end_after_close_s": round(ended, 2), "told": app.told}


def vanish(served: ServedStudy, seconds: float) -> dict[str, object]:
    raw, answer = handshake(served, "token-of-ana", "width=120&height=45")
    assert answer.startswith(b"HTTP/1.1 101"), answer
    import pyte

    screen = pyte.Screen(120, 45)
    stream = pyte.ByteStream(screen)
    raw.settimeout(0.05)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        # The server's frames, fed whole: their few header bytes are noise on the screen.
        with contextlib.suppress(TimeoutError):
            stream.feed(raw.recv(1 << 20))
        if "waiting for your feedback" in "\n".join(screen.display):
            break
    pid = app_pids(served)[0]
    lines = "ab\n" * 13_000
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        raw.sendall(client_frame(json.dumps(["stdin", PASTE_START + lines + PASTE_END])))
        time.sleep(0.5)
    gone = time.monotonic()  # from here on it reads, writes and closes nothing
    ended = until_gone(served, pid, gone)
    raw.close()
    return {"app_end_after_vanishing_s": round(ended, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("measure", choices=("peak", "paste", "flood", "vanish"))
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--model", default="mock:replies.jsonl")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        where = Path(folder)
        turns = args.turns if args.measure == "peak" else 2
        db = scripted_study(where, turns=turns, model=args.model)
        with served_study(db, where) as served:
            if args.measure == "peak":
                found = asyncio.run(peak(served, args.turns))
            elif args.measure == "paste":
                found = asyncio.run(paste(served))
            elif args.measure == "flood":
                found = asyncio.run(flood(served, args.seconds))
            else:
                found = vanish(served, args.seconds)
        log = [line for line in served.log.read_text().splitlines() if "ana:" in line]
    print(json.dumps({"measure": args.measure, **found, "server_log": log}, indent=1))


if __name__ == "__main__":
    main()
