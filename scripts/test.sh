#!/usr/bin/env bash
# Install what is missing, build with warnings as errors, run the test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
BUILD=${BUILD:-build}
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHY_WERROR=ON >/dev/null
cmake --build "$BUILD" -j"$(nproc)"
cd "$BUILD"
OPENBLAS_NUM_THREADS=1 ctest --output-on-failure -j"$(nproc)"
