#!/usr/bin/env bash
# Builds Weft (release preset) and runs the whole test suite; installs missing Debian packages first.
set -euo pipefail
caller=run-tests.sh
# shellcheck source=tools/build-release.sh
source "$(dirname "${BASH_SOURCE[0]}")/build-release.sh"
# Every test runs: "cpu" tests everywhere; "gpu" tests skip themselves where there is no GPU.
ctest --preset release -j"$(nproc)"
