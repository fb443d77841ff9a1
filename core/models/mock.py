"""``mock:FILE``: replies read from a script instead of written by a model, so that a test (or
a demo) gets the same code and the same test outcomes on every machine.

FILE holds one JSON object a line (blank lines are skipped)::

    {"purpose": "generate", "text": "```python\\ndef task_func(): ...\\n```"}
    {"purpose": "simulate", "text": "Sort the result.", "delay_s": 0.5}
    {"purpose": "repair", "text": "```python\\n...\\n```", "turn": 2, "seq": 1}

``purpose`` says which calls the row answers (``CallPurpose``): the coder's first call of a
turn (``generate``), its further code calls in the same turn (``repair`` after a compile
error, ``stale_ef`` with the previous turn's execution feedback), or the simulated user's
(``simulate``). ``delay_s`` (optional, default 0) is how long the reply takes to stream in,
spread over its words; a test that must act while a call runs (cancel it, press keys) sets
it. ``turn`` and ``seq`` (optional) pin a row to one call, below.

Chat calls (``complete``) and raw-text calls (``complete_text``) are answered alike, from the
same rows; only the request differs (messages or one prompt string). Which row answers a
call, from the ``CallInfo`` the turn loop passes (session, turn, purpose, seq):

- A pinned row (one with ``turn``) answers the calls of its purpose in that turn, and only
  those; with ``seq`` too, only the call at that position of the turn. A row naming the
  call's seq wins over one that names none; between equals, the first in the file. Pinned
  rows are set aside from the rules below, which read the other rows only.
- ``generate``: turn *i* of a session gets the *i*-th generate row. A turn makes exactly one
  generate call, so this is simply "the next row", and it stays so when something other than
  this object answered earlier turns: the call journal reusing a finished call (on resume,
  or across sessions with ``share_across_sessions``), a fresh backend resuming the session,
  a cancelled turn played again (which gets the same reply, as from a greedy model).
- ``simulate``, ``repair``, ``stale_ef``: a session's calls of one purpose take that
  purpose's rows in order (a turn may make none, or several). A request the session already
  made (same turn, seq and request: a cancelled turn played again) gets its row again. The
  position is kept in this object, per session key: a session resumed by a new backend
  starts these rows over, and a call the journal answers takes no row (pin rows to a turn
  where that matters).
- Without a ``CallInfo`` (the backend used directly) calls are ``generate`` calls of one
  session, answered by the rows in order.

A call the journal answers never reaches this object. With ``share_across_sessions`` the
journal answers any request it has seen, whatever the turn: a script whose turns send the
same request twice (the same code and feedback again) gets the first answer again there, as
from a greedy model.

One line may instead declare the model's chat template, ``{"chat_template": "<jinja>",
"special_tokens": {"bos_token": "<s>"}}`` (tokens optional): then ``chat_template()`` returns
it, and the mock plays an open model whose prompts are rendered here (BigCodeBench's turn 0);
without one it returns None, like a hosted chat API.

When a purpose's rows run out, the last one repeats, like a model stuck on its answer: one
failing reply plays a session of any length. A call for which no row is left (no unpinned row
of its purpose and no pin for it) fails with a fatal ModelError. ``params.stop`` is honoured
as a model's server does it: the reply ends before the first stop string it contains. Token
counts are word counts (whitespace-separated, over every message or the prompt in, and the
reply out); each call is one attempt, reported through ``on_attempt``. Every request is kept,
in order, in ``requests`` (call, kind, messages or prompt, params), for tests that check what
a caller sent."""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import threading
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args

from convtui.core.models.base import Hooks, Request, RequestBackend
from convtui.core.models.chat_template import ChatTemplate
from convtui.core.models.types import (
    Attempt,
    CallInfo,
    CallKind,
    CallPurpose,
    Completion,
    GenerationParams,
    ModelError,
)

PURPOSES: tuple[CallPurpose, ...] = get_args(CallPurpose)
ROW_KEYS = {"purpose", "text", "delay_s", "turn", "seq"}
ROW_FORM = '{"purpose": "generate" or "simulate", "text": "..."}'
PURPOSE_RULE = (
    "purpose must be generate or simulate, or repair or stale_ef for a turn's further code calls"
)
# Streamed pieces: each word with the space after it (leading space as a piece of its own).
_PIECE = re.compile(r"\S+\s*|\s+")


@dataclass(frozen=True)
class ScriptRow:
    purpose: CallPurpose
    text: str
    delay_s: float = 0.0
    turn: int | None = None  # pinned to this turn's calls (None: not pinned)
    seq: int | None = None  # and to this position in the turn (None: any)


# How many of its latest requests a mock keeps for a test to inspect.
REQUESTS_KEPT = 1000


@dataclass(frozen=True)
class MockRequest:
    """One call as the mock received it."""

    call: CallInfo | None
    kind: CallKind
    request: Request
    params: GenerationParams


def _position(where: str, data: dict[str, Any], key: str) -> int | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ModelError(f"{where}: {key} must be a whole number >= 0, got {value!r}")
    return value


def _line(where: str, line: str) -> dict[str, Any]:
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ModelError(f"{where} is not JSON ({exc.msg}); each line is {ROW_FORM}") from None
    if not isinstance(data, dict):
        raise ModelError(f"{where} is not a JSON object; each line is {ROW_FORM}")
    return data


def _row(where: str, data: dict[str, Any]) -> ScriptRow:
    unknown = sorted(set(data) - ROW_KEYS)
    if unknown:
        raise ModelError(f"{where} has unknown keys {unknown}; each line is {ROW_FORM}")
    purpose = data.get("purpose")
    if purpose not in PURPOSES:
        raise ModelError(f"{where}: {PURPOSE_RULE}, got {purpose!r}")
    text = data.get("text")
    if not isinstance(text, str):
        raise ModelError(f"{where}: text must be a string, got {type(text).__name__}")
    delay = data.get("delay_s", 0.0)
    if isinstance(delay, bool) or not isinstance(delay, int | float) or delay < 0:
        raise ModelError(f"{where}: delay_s must be a number of seconds >= 0, got {delay!r}")
    turn, seq = _position(where, data, "turn"), _position(where, data, "seq")
    if seq is not None and turn is None:
        raise ModelError(f"{where}: seq pins a row within a turn; give its turn too")
    return ScriptRow(purpose, text, float(delay), turn, seq)


@dataclass(frozen=True)
class Script:
    """A script file: its rows by purpose, in file order, and the chat template it declares."""

    rows: dict[CallPurpose, list[ScriptRow]]
    chat_template: ChatTemplate | None = None


def read_script(spec: str, path: Path) -> Script:
    """The script in ``path``; one clear ModelError line when it cannot be read."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise ModelError(f"{spec}: no script file at {path}; write one {ROW_FORM} a line") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ModelError(f"{spec}: cannot read {path}: {exc}") from None
    rows: dict[CallPurpose, list[ScriptRow]] = {purpose: [] for purpose in PURPOSES}
    template = None
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{spec}: line {number}"
        data = _line(where, line)
        if "chat_template" in data:
            template = _template(where, data)
        else:
            row = _row(where, data)
            rows[row.purpose].append(row)
    if not any(rows.values()):
        raise ModelError(f"{spec}: {path} has no rows; write one {ROW_FORM} a line")
    return Script(rows, template)


def _template(where: str, data: dict[str, Any]) -> ChatTemplate:
    """The chat template a script line declares."""
    tokens = data.get("special_tokens") or {}
    if not isinstance(data["chat_template"], str) or not isinstance(tokens, dict):
        raise ModelError(
            f'{where}: a chat_template line is {{"chat_template": "<jinja>", '
            '"special_tokens": {...}}'
        )
    return ChatTemplate(data["chat_template"], {str(k): str(v) for k, v in tokens.items()})


def _words(text: str) -> int:
    return len(text.split())


def cut_at_stop(text: str, stop: Sequence[str]) -> str:
    """``text`` up to (not including) the earliest stop string in it, as servers return it."""
    ends = [text.find(s) for s in stop if s]
    found = [end for end in ends if end >= 0]
    return text[: min(found)] if found else text


def _digest(request: Request) -> str:
    digest = hashlib.sha256()
    if isinstance(request, str):
        digest.update(f"text\0{request}".encode())
    else:
        for message in request:
            digest.update(f"{message.role}\0{message.content}\0".encode())
    return digest.hexdigest()


def _pinned(rows: list[ScriptRow], call: CallInfo) -> ScriptRow | None:
    """The row pinned to this call: one naming its turn and seq, else its turn alone."""
    for exact in (True, False):
        for row in rows:
            if row.turn == call.turn_idx and (row.seq == call.seq if exact else row.seq is None):
                return row
    return None


class MockBackend(RequestBackend):
    """Scripted replies (see the module docstring for which row answers which call)."""

    def __init__(self, *, spec: str, path: Path) -> None:
        self.spec = spec
        self.path = path
        self.model = path.stem
        self._script: Script | None = None
        self._lock = threading.Lock()  # calls may come from several event loops' threads
        self._next: dict[tuple[str, CallPurpose], int] = {}
        self._taken: dict[tuple[str, int, str, int, str], int] = {}
        # For a test to read; a sweep's hundred thousand calls must not all stay in memory.
        self._requests: deque[MockRequest] = deque(maxlen=REQUESTS_KEPT)

    @property
    def requests(self) -> list[MockRequest]:
        """The last REQUESTS_KEPT calls as the mock received them, oldest first."""
        with self._lock:
            return list(self._requests)

    def connection_key(self) -> str:
        return f"mock|{self.path}"

    def script(self) -> dict[CallPurpose, list[ScriptRow]]:
        """The file's rows, read once."""
        return self._read().rows

    def _read(self) -> Script:
        if self._script is None:
            self._script = read_script(self.spec, self.path)
        return self._script

    async def check(self) -> None:
        self.script()

    async def chat_template(self) -> ChatTemplate | None:
        """The template the script declares, if any (see the module docstring)."""
        return self._read().chat_template

    def _pick(self, call: CallInfo | None, request: Request) -> ScriptRow:
        purpose: CallPurpose = call.purpose if call is not None else "generate"
        rows = self.script()[purpose]
        if call is not None:
            pinned = _pinned(rows, call)
            if pinned is not None:
                return pinned
        rows = [row for row in rows if row.turn is None]
        if not rows:
            where = f" for turn {call.turn_idx} (seq {call.seq})" if call is not None else ""
            raise ModelError(
                f"{self.spec} has no {purpose} rows{where} but was asked for a {purpose} call; "
                f'add a line {{"purpose": "{purpose}", "text": "..."}}'
            )
        if call is not None and purpose == "generate":
            index = call.turn_idx
        else:
            index = self._take(call, request)
        return rows[min(index, len(rows) - 1)]

    def _take(self, call: CallInfo | None, request: Request) -> int:
        """The next unused row index of the call's session and purpose, or the one this same
        request (same turn and seq) got before."""
        purpose: CallPurpose = call.purpose if call else "generate"
        session = call.session if call else ""
        key = (session, call.turn_idx, purpose, call.seq, _digest(request)) if call else None
        with self._lock:
            if key is not None and key in self._taken:
                return self._taken[key]
            index = self._next.get((session, purpose), 0)
            self._next[(session, purpose)] = index + 1
            if key is not None:
                self._taken[key] = index
            return index

    async def _answer(self, request: Request, params: GenerationParams, hooks: Hooks) -> Completion:
        """The scripted reply, streamed word by word to ``on_text``; a raw prompt is answered
        from the same rows as chat calls."""
        kind: CallKind = "text" if isinstance(request, str) else "chat"
        if isinstance(request, str):
            words_in = _words(request)
        else:
            words_in = sum(_words(m.content) for m in request)
        started = time.monotonic()
        with self._lock:
            self._requests.append(MockRequest(hooks.call, kind, request, params))
        row = self._pick(hooks.call, request)
        text = cut_at_stop(row.text, params.stop)
        pieces = _PIECE.findall(text)
        pause = row.delay_s / len(pieces) if pieces else row.delay_s
        shown = ""
        for piece in pieces:
            await asyncio.sleep(pause)  # also lets the caller cancel between pieces
            shown += piece
            if hooks.on_text is not None:
                hooks.on_text(shown)
        if not pieces:
            await asyncio.sleep(pause)
        latency = time.monotonic() - started
        if hooks.on_attempt is not None:
            hooks.on_attempt(Attempt(1, "ok", latency, "", None))
        return Completion(
            text=text,
            finish_reason="stop",
            input_tokens=words_in,
            output_tokens=_words(text),
            latency_s=latency,
            attempts=1,
            model=self.model,
            resolved_model=None,
        )
