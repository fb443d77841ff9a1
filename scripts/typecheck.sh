#!/usr/bin/env bash
# mypy over every convtui package, and over the measurement scripts in scripts/perf (run by
# path, so checked as top-level modules of their folder). The folders import as convtui.*
# through setuptools' package-dir, which mypy cannot follow through the editable install's
# import hook (it would see every cross-package import as a missing module and check nothing
# across them), so a tree of links in build/typecheck lays them out as they import.
set -euo pipefail
cd "$(dirname "$0")/.."
tree=build/typecheck/convtui
rm -rf build/typecheck
mkdir -p "$tree"
for file in convtui/*.py; do ln -s "../../../$file" "$tree/"; done
ln -s ../../../convtui/cli "$tree/cli"
for package in core sessions tui benchmarks; do ln -s "../../../$package" "$tree/$package"; done
scripts=()
for file in scripts/perf/*.py; do scripts+=(-m "$(basename "$file" .py)"); done
MYPYPATH=build/typecheck:scripts/perf exec python -m mypy --cache-dir build/mypy-cache \
  -p convtui "${scripts[@]}" "$@"
