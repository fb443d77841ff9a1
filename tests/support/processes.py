"""The process tree as /proc shows it now: who is whose parent, and what stands below a
process (the tests that check nothing outlives a sandbox or a served app read it)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path


def proc_table(*, zombies: bool = True) -> dict[int, int]:
    """pid -> ppid of every process visible now; without the zombies (exited, not yet
    reaped by their parent) where ``zombies`` is false."""
    table = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_bytes()
        except OSError:
            continue
        # The command name may hold spaces and parentheses: split after the last ')'.
        state, ppid = stat[stat.rfind(b")") + 2 :].split()[:2]
        if zombies or state != b"Z":
            table[int(entry.name)] = int(ppid)
    return table


def descendants(root: int, table: Mapping[int, int]) -> set[int]:
    """Every process below ``root`` in ``table`` (pid -> ppid), at any depth."""
    children: dict[int, list[int]] = {}
    for pid, ppid in table.items():
        children.setdefault(ppid, []).append(pid)
    found, todo = set(), [root]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found
