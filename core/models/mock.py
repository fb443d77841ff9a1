"""``mock:FILE``: replies read from a script instead of written by a model, so that a test (or
a demo) gets the same code and the same test outcomes on every machine.

FILE holds one JSON object a line (blank lines are skipped)::

    {"purpose": "generate", "text": "```python\\ndef task_func(): ...\\n```"}
    {"purpose": "simulate", "text": "Sort the result.", "delay_s": 0.5}

``purpose`` says which calls the row answers: the coder's (``generate``) or the simulated
user's (``simulate``). ``delay_s`` (optional, default 0) is how long the reply takes to
stream in, spread over its words; a test that must act while a call runs (cancel it, press
keys) sets it.

Which row answers a call, from the ``CallInfo`` the turn loop passes:

- ``generate``: turn *i* of a session gets the *i*-th generate row. A turn makes exactly one
  generate call, so this is simply "the next row", and it stays so when something other than
  this object answered earlier turns: the call journal reusing a finished call (on resume,
  or across sessions with ``share_across_sessions``), a fresh backend resuming the session,
  a cancelled turn played again (which gets the same reply, as from a greedy model).
- ``simulate``: a session's simulate calls take the simulate rows in order (a turn may make
  none, or two when the expert is asked again). A request the session already made (same
  turn, same messages: a cancelled turn played again) gets its row again. The position is
  kept in this object, per session key: a session resumed by a new backend starts its
  simulate rows over, and a simulate call the journal answers takes no row.
- Without a ``CallInfo`` (the backend used directly) calls are ``generate`` calls of one
  session, answered by the rows in order.

A call the journal answers never reaches this object. With ``share_across_sessions`` the
journal answers any request it has seen, whatever the turn: a script whose turns send the
same request twice (the same code and feedback again) gets the first answer again there, as
from a greedy model.

When a purpose's rows run out, the last one repeats, like a model stuck on its answer: one
failing reply plays a session of any length. A call for a purpose with no rows fails with a
fatal ModelError. Token counts are word counts (whitespace-separated, over every message in
and the reply out); each call is one attempt, reported through ``on_attempt``."""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import get_args

from convtui.core.models.base import AttemptCallback, ModelBackend, TextCallback
from convtui.core.models.types import (
    Attempt,
    CallInfo,
    CallPurpose,
    ChatMessage,
    Completion,
    GenerationParams,
    ModelError,
)

PURPOSES: tuple[CallPurpose, ...] = get_args(CallPurpose)
ROW_KEYS = {"purpose", "text", "delay_s"}
ROW_FORM = '{"purpose": "generate" or "simulate", "text": "..."}'
# Streamed pieces: each word with the space after it (leading space as a piece of its own).
_PIECE = re.compile(r"\S+\s*|\s+")


@dataclass(frozen=True)
class ScriptRow:
    purpose: CallPurpose
    text: str
    delay_s: float = 0.0


def _row(spec: str, number: int, line: str) -> ScriptRow:
    where = f"{spec}: line {number}"
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ModelError(f"{where} is not JSON ({exc.msg}); each line is {ROW_FORM}") from None
    if not isinstance(data, dict):
        raise ModelError(f"{where} is not a JSON object; each line is {ROW_FORM}")
    unknown = sorted(set(data) - ROW_KEYS)
    if unknown:
        raise ModelError(f"{where} has unknown keys {unknown}; each line is {ROW_FORM}")
    purpose = data.get("purpose")
    if purpose not in PURPOSES:
        raise ModelError(f"{where}: purpose must be generate or simulate, got {purpose!r}")
    text = data.get("text")
    if not isinstance(text, str):
        raise ModelError(f"{where}: text must be a string, got {type(text).__name__}")
    delay = data.get("delay_s", 0.0)
    if isinstance(delay, bool) or not isinstance(delay, int | float) or delay < 0:
        raise ModelError(f"{where}: delay_s must be a number of seconds >= 0, got {delay!r}")
    return ScriptRow(purpose, text, float(delay))


def read_script(spec: str, path: Path) -> dict[CallPurpose, list[ScriptRow]]:
    """The rows of ``path`` by purpose, in file order; one clear ModelError line otherwise."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise ModelError(f"{spec}: no script file at {path}; write one {ROW_FORM} a line") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ModelError(f"{spec}: cannot read {path}: {exc}") from None
    script: dict[CallPurpose, list[ScriptRow]] = {purpose: [] for purpose in PURPOSES}
    for number, line in enumerate(lines, start=1):
        if line.strip():
            row = _row(spec, number, line)
            script[row.purpose].append(row)
    if not any(script.values()):
        raise ModelError(f"{spec}: {path} has no rows; write one {ROW_FORM} a line")
    return script


def _words(text: str) -> int:
    return len(text.split())


def _request_key(call: CallInfo, messages: Sequence[ChatMessage]) -> tuple[str, int, str, str]:
    digest = hashlib.sha256()
    for message in messages:
        digest.update(f"{message.role}\0{message.content}\0".encode())
    return (call.session, call.turn_idx, call.purpose, digest.hexdigest())


class MockBackend(ModelBackend):
    """Scripted replies (see the module docstring for which row answers which call)."""

    def __init__(self, *, spec: str, path: Path) -> None:
        self.spec = spec
        self.path = path
        self.model = path.stem
        self._script: dict[CallPurpose, list[ScriptRow]] | None = None
        self._lock = threading.Lock()  # calls may come from several event loops' threads
        self._next: dict[tuple[str, CallPurpose], int] = {}
        self._taken: dict[tuple[str, int, str, str], int] = {}

    def connection_key(self) -> str:
        return f"mock|{self.path}"

    def script(self) -> dict[CallPurpose, list[ScriptRow]]:
        """The file's rows, read once."""
        if self._script is None:
            self._script = read_script(self.spec, self.path)
        return self._script

    async def check(self) -> None:
        self.script()

    def _pick(self, call: CallInfo | None, messages: Sequence[ChatMessage]) -> ScriptRow:
        purpose: CallPurpose = call.purpose if call is not None else "generate"
        rows = self.script()[purpose]
        if not rows:
            raise ModelError(
                f"{self.spec} has no {purpose} rows but was asked for a {purpose} call; "
                f'add a line {{"purpose": "{purpose}", "text": "..."}}'
            )
        if call is not None and purpose == "generate":
            index = call.turn_idx
        else:
            index = self._take(call, messages)
        return rows[min(index, len(rows) - 1)]

    def _take(self, call: CallInfo | None, messages: Sequence[ChatMessage]) -> int:
        """The next unused row index of the call's session and purpose, or the one this same
        request got before."""
        session, purpose = (call.session, call.purpose) if call else ("", "generate")
        key = _request_key(call, messages) if call else None
        with self._lock:
            if key is not None and key in self._taken:
                return self._taken[key]
            index = self._next.get((session, purpose), 0)
            self._next[(session, purpose)] = index + 1
            if key is not None:
                self._taken[key] = index
            return index

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        params: GenerationParams,
        *,
        on_text: TextCallback | None = None,
        on_attempt: AttemptCallback | None = None,
        call: CallInfo | None = None,
    ) -> Completion:
        """The scripted reply, streamed word by word to ``on_text``."""
        started = time.monotonic()
        row = self._pick(call, messages)
        pieces = _PIECE.findall(row.text)
        pause = row.delay_s / len(pieces) if pieces else row.delay_s
        shown = ""
        for piece in pieces:
            await asyncio.sleep(pause)  # also lets the caller cancel between pieces
            shown += piece
            if on_text is not None:
                on_text(shown)
        if not pieces:
            await asyncio.sleep(pause)
        latency = time.monotonic() - started
        if on_attempt is not None:
            on_attempt(Attempt(1, "ok", latency, "", None))
        return Completion(
            text=row.text,
            finish_reason="stop",
            input_tokens=sum(_words(m.content) for m in messages),
            output_tokens=_words(row.text),
            latency_s=latency,
            attempts=1,
            model=self.model,
            resolved_model=None,
        )
