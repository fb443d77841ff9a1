#!/usr/bin/env bash
# Installs llama-cpp-python (the embedded model's runtime) built for x86-64 machines from
# about 2013 on (AVX2, FMA, F16C), not for this machine's every instruction. pip's default
# build is native: on a CPU with AVX-512 and AMX, inside a VM or sandbox that does not give
# the process AMX's tile state, llama.cpp's first generation with more than one thread dies
# with SIGSEGV in libggml-cpu (the CI machine of 2026-11-28, llama-cpp-python 0.3.36: every
# test that ran the real model crashed its worker). The portable build runs everywhere and,
# for the 135M embedded model, as fast as it needs to.
#
# The wheel is kept in the cache folder named below, so the build (about 6 minutes on 2 cores)
# is paid once per machine; pip's own cache is not used, since it would hand back a native
# build made earlier. Elsewhere than x86-64, pip builds as it would.
set -euo pipefail
spec="llama-cpp-python>=0.3"
case "$(uname -m)" in
  x86_64 | amd64) ;;
  *)
    python -m pip install -q --disable-pip-version-check "$spec"
    exit 0
    ;;
esac
wheels="${XDG_CACHE_HOME:-$HOME/.cache}/convtui/wheels/llama-cpp-avx2"
if ! compgen -G "$wheels/llama_cpp_python-*.whl" >/dev/null; then
  echo "building llama-cpp-python for AVX2 (once per machine, about 6 minutes on 2 cores," \
    "longer on a busy one; a line every 30 s says how far it is)" >&2
  # The compile is silent for minutes under pip's -q: its verbose output goes to a log, and
  # build_progress.py prints how many files are compiled, so a slow build never looks hung.
  log="$(mktemp -t llama-build.XXXXXX.log)"
  if ! CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON" \
    python -m pip wheel -v --disable-pip-version-check --no-deps --no-cache-dir \
    -w "$wheels" "$spec" 2>&1 | python "$(dirname "$0")/build_progress.py" --log "$log"; then
    tail -n 40 "$log" >&2
    echo "the llama-cpp-python build failed: its whole output is in $log" >&2
    exit 1
  fi
  rm -f "$log"
fi
newest=$(ls -t "$wheels"/llama_cpp_python-*.whl | head -n 1)
python -m pip install -q --disable-pip-version-check --force-reinstall --no-deps "$newest"
