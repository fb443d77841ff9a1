"""The tables of the simulated-user fidelity report (core/studies/fidelity.py computes them;
study_fidelity_views.py, fidelity_plots.py and the export card show them): a result type in a
module of its own, so the front ends import it without the code that computes it. Every
difference is a core/metrics/stats.py :class:`Comparison` over sessions (``UNIT``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from convtui.core.metrics.stats import Bootstrap, Comparison

UNIT = "sessions"
"""What a fidelity interval resamples and its tests count (core/studies/fidelity.py says why)."""

Measure = Literal["passed", "share"]
SCALE, DIGITS = 1.0, 4  # JSON keeps fractions, as pass_rate and mean_share are


@dataclass(frozen=True)
class SourceRow:
    """One feedback source over a set of states.

    - ``outcomes``, ``states``, ``sessions``: its (state, target) outcomes and the states and
      sessions they come from;
    - ``pass_rate``, ``mean_share``: over all its outcomes, the share that passed and the mean
      share of tests passed (unpaired: every outcome of the source counts);
    - ``gain_pass``, ``gain_share``: the source minus the control on the (state, target)
      pairs both have (None when there is none); the control's own row holds a gain of
      exactly 0 over itself;
    - ``holm_pass``, ``holm_share``: in a per-task table, the gain's p-value Holm-adjusted
      over this source's gains on every task; None in a pooled table (one test)."""

    source: str
    outcomes: int
    states: int
    sessions: int
    pass_rate: float
    mean_share: float
    gain_pass: Comparison | None
    gain_share: Comparison | None
    holm_pass: float | None = None
    holm_share: float | None = None

    def measured(self, measure: Measure) -> Comparison | None:
        return self.gain_pass if measure == "passed" else self.gain_share

    def to_json(self) -> dict[str, object]:
        return {
            "source": self.source,
            "outcomes": self.outcomes,
            "states": self.states,
            "sessions": self.sessions,
            "pass_rate": self.pass_rate,
            "mean_share": self.mean_share,
            "gain_pass": _json(self.gain_pass),
            "gain_share": _json(self.gain_share),
            "holm_pass": self.holm_pass,
            "holm_share": self.holm_share,
        }


@dataclass(frozen=True)
class AnnotatorRow:
    """The worth of one annotator's feedback: on the states where they gave it, the
    person's words against the control, matched on (state, target).

    ``states``: the states matched; ``person_pass_rate``, ``control_pass_rate``,
    ``person_share``, ``control_share``: the two sides' pass rates and mean shares over the
    matched pairs; ``gain_pass`` and
    ``gain_share`` their differences (person − control) over the annotator's sessions;
    ``holm_pass``, ``holm_share`` their p-values Holm-adjusted over every annotator of the
    table."""

    annotator: str
    states: int
    person_pass_rate: float
    control_pass_rate: float
    person_share: float
    control_share: float
    gain_pass: Comparison
    gain_share: Comparison
    holm_pass: float = 1.0
    holm_share: float = 1.0

    def to_json(self) -> dict[str, object]:
        return {
            "annotator": self.annotator,
            "states": self.states,
            "person_pass_rate": self.person_pass_rate,
            "control_pass_rate": self.control_pass_rate,
            "person_share": self.person_share,
            "control_share": self.control_share,
            "gain_pass": _json(self.gain_pass),
            "gain_share": _json(self.gain_share),
            "holm_pass": self.holm_pass,
            "holm_share": self.holm_share,
        }


@dataclass(frozen=True)
class PairRow:
    """The person against ``other`` (a simulator, or ``"none"``, the control) on the
    (state, target) pairs both have: differences person − other in pass and in share of
    tests passed; in a per-task table their p-values Holm-adjusted over the tasks."""

    other: str
    pass_diff: Comparison
    share_diff: Comparison
    holm_pass: float | None = None
    holm_share: float | None = None

    def measured(self, measure: Measure) -> Comparison | None:
        return self.pass_diff if measure == "passed" else self.share_diff

    def to_json(self) -> dict[str, object]:
        return {
            "other": self.other,
            "pass_diff": _json(self.pass_diff),
            "share_diff": _json(self.share_diff),
            "holm_pass": self.holm_pass,
            "holm_share": self.holm_share,
        }


@dataclass(frozen=True)
class Tables:
    """The per-source, per-annotator and per-pair tables over one set of outcomes."""

    sources: tuple[SourceRow, ...]
    annotators: tuple[AnnotatorRow, ...]
    pairs: tuple[PairRow, ...]

    def to_json(self) -> dict[str, object]:
        return {
            "sources": [r.to_json() for r in self.sources],
            "annotators": [r.to_json() for r in self.annotators],
            "pairs": [r.to_json() for r in self.pairs],
        }


@dataclass(frozen=True)
class FidelityReport:
    """Every table, computed with ``bootstrap`` over ``UNIT``: ``sources``, ``annotators``
    and ``pairs`` pooled over every target; ``by_target`` the same tables per target;
    ``sources_by_task`` and ``pairs_by_task`` per task (pooled over targets)."""

    bootstrap: Bootstrap
    sources: tuple[SourceRow, ...]
    sources_by_task: dict[str, tuple[SourceRow, ...]] = field(default_factory=dict)
    annotators: tuple[AnnotatorRow, ...] = ()
    pairs: tuple[PairRow, ...] = ()
    pairs_by_task: dict[str, tuple[PairRow, ...]] = field(default_factory=dict)
    by_target: dict[str, Tables] = field(default_factory=dict)

    @property
    def method(self) -> str:
        """The intervals' method in words, the unit named."""
        return self.bootstrap.method(UNIT)

    def to_json(self) -> dict[str, object]:
        """Plain dicts, lists, strings and numbers (``json.dumps`` takes it as it is);
        differences in fractions, as the rates are."""
        return {
            "bootstrap": {**self.bootstrap.to_json(UNIT), "text": self.method},
            "sources": [r.to_json() for r in self.sources],
            "sources_by_task": {
                t: [r.to_json() for r in rows] for t, rows in self.sources_by_task.items()
            },
            "annotators": [r.to_json() for r in self.annotators],
            "pairs": [r.to_json() for r in self.pairs],
            "pairs_by_task": {
                t: [r.to_json() for r in rows] for t, rows in self.pairs_by_task.items()
            },
            "by_target": {t: tables.to_json() for t, tables in self.by_target.items()},
        }


def _json(found: Comparison | None) -> dict[str, object] | None:
    return None if found is None else found.to_json(SCALE, DIGITS)


def points(found: Comparison | None, scale: float = 100.0) -> str:
    """``+12.5 [-3.1, +20.0]`` in points of ``scale``; ``+12.5 (n/a)`` where the sessions are
    too few for an interval (the table's note says why); ``—`` when nothing was matched."""
    if found is None:
        return "—"
    d = found.difference
    value = f"{scale * d.value:+.1f}"
    if d.low is None or d.high is None:
        return f"{value} (n/a)"
    return f"{value} [{scale * d.low:+.1f}, {scale * d.high:+.1f}]"


def effect(found: Comparison | None) -> str:
    """Cohen's d_z of a comparison, ``—`` where the differences do not vary."""
    return "—" if found is None or found.effect_size is None else f"{found.effect_size:+.2f}"


def p_text(p: float | None) -> str:
    return "—" if p is None else f"{p:.3f}"
