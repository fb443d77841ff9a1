"""What the repository-level CodeIF-Bench checks (``codeif_repo_parity.py``,
``codeif_repo_tables.py``) read: the authors' experiments at commit 93b17ef, our data folder,
and L-1's data file. Imported from beside them (``python scripts/….py`` puts this folder first
on the path)."""

from __future__ import annotations

import argparse
from pathlib import Path

# L-1's published rows were not made from the first L-1 file: they carry instruction test ids
# that file lacks, and pass where its indent (4 more than each function's column) would make
# every candidate fail to compile. They match today's file, which has both.
LEVEL_1 = "CodeIF-Bench-L1-repo.jsonl"


def check_parser(doc: str) -> argparse.ArgumentParser:
    """Options described by ``doc``'s first paragraph, with those both checks take:
    ``--experiments``, ``--data`` and ``--out``."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--experiments", type=Path, required=True, help="a checkout of 93b17ef")
    parser.add_argument("--data", type=Path, required=True, help="the CodeIF-Bench data folder")
    parser.add_argument("--out", type=Path, required=True)
    return parser
