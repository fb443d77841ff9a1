"""How well static (replayed, ConvCodeBench) scores rank models the way live ones do.

ConvCodeWorld's paper, arguing that ConvCodeBench is a cheap proxy for ConvCodeWorld, reports
for each feedback configuration Spearman's rank correlation and Kendall's tau between the live
and the static MRR (and Recall) of the same models. :func:`rank_correlation` is that
comparison for one metric and one configuration, as a pure function of per-model scores;
scipy computes the statistics (``scipy.stats.spearmanr`` and ``kendalltau``, tau-b, which
handles ties). scipy ships with the ``exec`` extra and is imported only when called.

A case the statistics cannot answer comes back with the values ``None`` and a ``reason`` in
words, never NaN: fewer than three models scored both ways, or one side giving every model
the same score (its ranks are all tied, so a correlation is undefined)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

MIN_MODELS = 3


@dataclass(frozen=True)
class RankCorrelation:
    """Spearman's rho and Kendall's tau between live and static scores over ``models`` (the
    ones scored both ways, sorted). The four values are None exactly when ``reason`` says why
    they could not be computed."""

    models: tuple[str, ...]
    spearman_rho: float | None = None
    spearman_p: float | None = None
    kendall_tau: float | None = None
    kendall_p: float | None = None
    reason: str = ""

    @property
    def n(self) -> int:
        return len(self.models)

    @property
    def computed(self) -> bool:
        return not self.reason


def rank_correlation(
    live: Mapping[str, float], static: Mapping[str, float], metric: str = "MRR"
) -> RankCorrelation:
    """Rank correlation between ``live`` and ``static`` (model -> score) over the models in
    both. ``metric`` names the scores in the reasons ("MRR", "Recall")."""
    models = tuple(sorted(set(live) & set(static)))
    if not static:
        return RankCorrelation(models, reason="no static results to compare with")
    if len(models) < MIN_MODELS:
        return RankCorrelation(
            models,
            reason=f"needs at least {MIN_MODELS} models with both live and static results; "
            f"found {len(models)}",
        )
    xs = [live[m] for m in models]
    ys = [static[m] for m in models]
    for side, scores in (("live", xs), ("static", ys)):
        if len(set(scores)) == 1:
            return RankCorrelation(
                models,
                reason=f"every model has the same {side} {metric}: ranks are undefined",
            )
    from scipy import stats

    rho, rho_p = stats.spearmanr(xs, ys)
    tau, tau_p = stats.kendalltau(xs, ys)
    rho, rho_p, tau, tau_p = (float(v) for v in (rho, rho_p, tau, tau_p))
    if any(math.isnan(v) for v in (rho, rho_p, tau, tau_p)):  # not expected after the checks
        return RankCorrelation(models, reason="scipy could not compute a correlation")
    return RankCorrelation(models, rho, rho_p, tau, tau_p)
