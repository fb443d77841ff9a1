"""Helpers shared by the test modules: data paths and their skips, the command line (in
process and as a real process), scripted-model writers and the values scripted runs share.

Test modules import from here, never from one another. The root ``tests/conftest.py`` holds
the fixtures (session-scoped where they are expensive and immutable); this package holds
plain functions and values. It imports as ``support`` (the root conftest's folder is on
``sys.path`` under pytest's default import mode), so ``pytest tests/core`` collects alone."""
