#!/usr/bin/env bash
# Builds the Weft library and the demo (release preset) and runs the demo; installs missing
# Debian packages first. GoogleTest is not needed.
set -euo pipefail
caller=run-demo.sh
with_tests=OFF
# shellcheck source=tools/build-release.sh
source "$(dirname "${BASH_SOURCE[0]}")/build-release.sh"
cmake --build --preset release -j"$(nproc)" --target weft_demo
build/release/examples/weft_demo
