"""Every key that works here, with what the focused pane is for.

The rows are read from the same bindings the footer and the command palette use (the app's,
the screen's and its panes', after any keymap), so help cannot leave a key out or name one
that does not exist; keys the current phase does not offer are listed as "not now"."""

from __future__ import annotations

from typing import NamedTuple

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.dom import DOMNode
from textual.screen import ModalScreen, Screen
from textual.widgets import Markdown, Static

from convtui.tui.screens.guidelines import guidelines_markdown
from convtui.tui.screens.modal_keys import ModalKeys

# Textual's own actions worth a row beside ours (its text boxes' editing keys are not).
TEXTUAL_ACTIONS = frozenset({"quit", "command_palette"})


class KeyHelp(NamedTuple):
    """One action of the help table: its keys, name and tooltip, the pane it works in ("" for
    the whole screen) and whether the current phase offers it."""

    keys: str
    description: str
    tooltip: str
    where: str
    now: bool


def _listed(binding: Binding) -> bool:
    ours = (binding.id or "").startswith("convtui.") or binding.action in TEXTUAL_ACTIONS
    return ours and bool(binding.description)


def _key_display(app: App, bindings: list[Binding]) -> str:
    if len(bindings) == 1:
        return app.get_key_display(bindings[0])
    # A binding with several keys ("ctrl+j,alt+enter") shares one key_display: name each key.
    shown = [app.get_key_display(Binding(b.key, b.action)) for b in bindings]
    return " / ".join(dict.fromkeys(shown))


def key_help(app: App, screen: Screen) -> list[KeyHelp]:
    """The screen's and the app's keys first, then each pane's (named by its
    ``BINDING_GROUP_TITLE``), in the order they are declared."""
    namespaces: list[tuple[DOMNode, str]] = [(screen, ""), (app, "")]
    for widget in screen.walk_children(with_self=False):
        namespaces.append((widget, widget.BINDING_GROUP_TITLE or type(widget).__name__))
    rows: list[KeyHelp] = []
    seen: set[tuple[str, str]] = set()
    for node, where in namespaces:
        grouped: dict[str, list[Binding]] = {}
        for _key, binding in node._bindings:
            if _listed(binding):
                grouped.setdefault(binding.action, []).append(binding)
        for action, bindings in grouped.items():
            if (where, action) in seen:  # the app's quit and Textual's, under one row
                continue
            seen.add((where, action))
            first = next((b for b in bindings if b.id), bindings[0])
            rows.append(
                KeyHelp(
                    keys=_key_display(app, bindings),
                    description=first.description,
                    tooltip=first.tooltip or "",
                    where=where,
                    now=node.check_action(action, ()) is True,
                )
            )
    return _one_row_per_key(rows)


def _one_row_per_key(rows: list[KeyHelp]) -> list[KeyHelp]:
    """Actions that share a key in one group and are offered in different phases (escape
    cancels a running step, and otherwise goes back to the composer) get one row: the action
    the key does now, or the first of them when none is offered."""
    chosen: dict[tuple[str, str], KeyHelp] = {}
    for row in rows:
        kept = chosen.setdefault((row.where, row.keys), row)
        if row.now and not kept.now:
            chosen[(row.where, row.keys)] = row
    return [row for row in rows if chosen[(row.where, row.keys)] is row]


def _label(row: KeyHelp) -> str:
    return row.description if row.now else f"{row.description} (not now)"


def bindings_table(rows: list[KeyHelp]) -> Group:
    """One table per group (the screen's keys, then each pane's), aligned with each other;
    within a group what works now comes first and the rest follows, dimmed."""
    key_width = max((len(r.keys) for r in rows), default=3)
    action_width = max((len(_label(r)) for r in rows), default=6)
    tables = []
    for where in dict.fromkeys(r.where for r in rows):
        title = f"In {where}" if where else None
        table = Table(box=None, expand=True, title=title, title_justify="left", title_style="bold")
        table.add_column("key", no_wrap=True, width=max(key_width, 3))
        table.add_column("action", no_wrap=True, width=max(action_width, 6))
        table.add_column("what it does", ratio=1)
        table.show_header = not where
        for row in sorted((r for r in rows if r.where == where), key=lambda r: not r.now):
            style = "" if row.now else "dim"
            table.add_row(Text(row.keys, style), Text(_label(row), style), Text(row.tooltip, style))
        tables.append(table)
    return Group(*tables)


class HelpModal(ModalKeys, ModalScreen[None]):
    DEFAULT_CSS = """
    HelpModal {
        align: center middle;
        & > VerticalScroll {
            width: 90%; max-width: 110; height: 90%;
            border: thick $primary; background: $panel; padding: 0 1;
        }
    }
    """
    BINDINGS = [Binding("escape,f1,q", "dismiss", "Close", id="convtui.close-help")]

    def __init__(self, rows: list[KeyHelp], blurb: str, guidelines: str = "") -> None:
        super().__init__()
        self._rows = rows
        self._blurb = blurb
        self._guidelines = guidelines
        """A study's guidelines (Markdown), shown below the keys."""

    @property
    def rows(self) -> list[KeyHelp]:
        return self._rows

    def compose(self) -> ComposeResult:
        scroll = VerticalScroll()
        scroll.border_title = "Help"
        scroll.border_subtitle = "escape closes · ctrl+p lists every command"
        if self._guidelines:
            scroll.border_subtitle += " · the study's guidelines follow the keys"
        with scroll:
            if self._blurb:
                yield Markdown(self._blurb)
            yield Static(bindings_table(self._rows))
            if self._guidelines:
                yield Static(Text("\nThe study's guidelines", style="bold"), id="help-guidelines")
                yield guidelines_markdown(self._guidelines)
