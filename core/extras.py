"""How a message tells a person to install one of convtui's extras: one spelling everywhere.

``pip install "convtui[EXTRA]"`` works from any folder and however convtui was installed (a
clone installed with ``pip install -e .``, a wheel): pip keeps the convtui it has and adds the
extra's packages. Checked with an editable install and pip run from ``/``: it added
krippendorff, pyarrow and textual-serve for ``study`` and left convtui as it was. A hint
naming ``-e ".[EXTRA]"`` works only from the clone's folder."""

from __future__ import annotations


def install_hint(extra: str) -> str:
    """The command that installs ``extra``: ``pip install "convtui[study]"``."""
    return f'pip install "convtui[{extra}]"'
