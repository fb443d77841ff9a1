"""How much of the reference solution a feedback text gives away (issue 32, "what the words
are"): the code a text holds, its Python tokens, and their overlap with the reference's.

The measure is over **Python tokens** (the standard ``tokenize`` module): identifiers and
keywords (``NAME``), numbers, string literals as written, and operators and punctuation
(``OP``); comments, whitespace, newlines and indentation do not count. Tokens are counted as
a multiset, so ``giveaway`` is the clipped recall of the reference's tokens: for each token,
min(times in the feedback's code, times in the reference), summed, over the reference's
token count. Code that holds the whole reference scores 1; a text with no code scores 0.
Common keywords and operators count too, so unrelated code scores above 0: compare sources
(the expert simulator, which sees the ground truth, against people), not against zero."""

from __future__ import annotations

import io
import re
import textwrap
import tokenize
from collections import Counter
from collections.abc import Sequence

_COUNTED = frozenset({tokenize.NAME, tokenize.NUMBER, tokenize.STRING, tokenize.OP})
_FENCE_OPEN = re.compile(r"^[ \t]*(`{3,}|~{3,})")
_INLINE = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)")


def feedback_code(text: str) -> tuple[str, ...]:
    """The code ``text`` holds, in order: the body of each fenced block (``` or ~~~, any
    info string; an unclosed fence runs to the end), then each inline code span (`…`, on
    one line) outside the fences. Blank pieces are dropped."""
    blocks: list[str] = []
    prose: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        opened = _FENCE_OPEN.match(lines[i])
        if not opened:
            prose.append(lines[i])
            i += 1
            continue
        fence = opened.group(1)
        body: list[str] = []
        i += 1
        while i < len(lines) and not re.match(
            rf"^[ \t]*{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$", lines[i]
        ):
            body.append(lines[i])
            i += 1
        i += 1  # past the closing fence (or the end)
        blocks.append("\n".join(body))
    spans = [m.group(2).strip() for line in prose for m in _INLINE.finditer(line)]
    return tuple(piece for piece in (*blocks, *spans) if piece.strip())


def code_tokens(code: str) -> Counter[str]:
    """The multiset of counted tokens (see the module) of ``code``. A piece ``tokenize``
    cannot read whole (bad indentation, a fragment) is read line by line, each line
    stripped, keeping the tokens read before any error."""
    whole = _tokens(textwrap.dedent(code))
    if whole is not None:
        return whole
    counted: Counter[str] = Counter()
    for line in code.splitlines():
        counted += _tokens(line.strip(), partial=True) or Counter()
    return counted


def _tokens(code: str, partial: bool = False) -> Counter[str] | None:
    """The counted tokens of ``code``; on a tokenize error, those read before it when
    ``partial``, else None. An error at the very end (an unclosed bracket) loses nothing."""
    counted: Counter[str] = Counter()
    try:
        for token in tokenize.generate_tokens(io.StringIO(code).readline):
            if token.type in _COUNTED:
                counted[token.string] += 1
    except tokenize.TokenError:
        return counted  # raised only at the end of input: every token was read
    except SyntaxError:  # IndentationError and its kin, part way through
        return counted if partial else None
    return counted


def giveaway(pieces: Sequence[str], reference: str, known: str = "") -> float:
    """The share of ``reference``'s tokens found in the code ``pieces`` (see the module),
    leaving out the tokens of ``known`` first (multiset difference): pass the candidate's
    code there to count only what the person or simulator could not have quoted from the
    code in front of them. 0.0 with no code, or when nothing is left to give away."""
    target = code_tokens(reference) - code_tokens(known)
    total = sum(target.values())
    if not pieces or total == 0:
        return 0.0
    given: Counter[str] = Counter()
    for piece in pieces:
        given += code_tokens(piece)
    return sum((given & target).values()) / total
