#!/usr/bin/env bash
# Builds Weft (release preset) and runs the demo; installs missing Debian packages first.
set -euo pipefail
caller=run-demo.sh
# shellcheck source=tools/build-release.sh
source "$(dirname "${BASH_SOURCE[0]}")/build-release.sh"
build/release/examples/weft_demo
