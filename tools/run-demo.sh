#!/usr/bin/env bash
# Builds the Weft library and one example (release preset) and runs it; installs missing Debian
# packages first. GoogleTest is not needed.
# Usage: tools/run-demo.sh [example] [arguments...]   (the example `demo` by default; `--list`
# names them all)
set -euo pipefail
# Each examples/NAME.cpp is the example NAME, built as the target weft_NAME.
examples=()
for source in "$(dirname "${BASH_SOURCE[0]}")"/../examples/*.cpp; do
    name="${source##*/}"
    examples+=("${name%.cpp}")
done
example="${1:-demo}"
(($#)) && shift
if [[ "$example" == --list ]]; then
    printf '%s\n' "${examples[@]}"
    exit 0
fi
# The name becomes a build target and a path: only the known ones are accepted.
known=0
for name in "${examples[@]}"; do [[ "$example" == "$name" ]] && known=1; done
if ((!known)); then
    echo "run-demo.sh: no example named '${example//[^A-Za-z0-9_.-]/?}'; the examples are: ${examples[*]}" >&2
    exit 2
fi
caller=run-demo.sh
with_tests=OFF
# The data-parallel example compares 1, 2 and 4 ranks: it runs under mpirun with 4 processes.
with_mpi=OFF
[[ "$example" == data_parallel ]] && with_mpi=ON
# shellcheck source=tools/build-release.sh
source "$(dirname "${BASH_SOURCE[0]}")/build-release.sh"
build_targets "weft_$example"
if [[ "$with_mpi" == ON ]]; then
    mpirun=(mpirun -np 4 --oversubscribe)
    ((EUID == 0)) && mpirun+=(--allow-run-as-root)
    echo "$caller: running ${mpirun[*]} build/release/examples/weft_$example"
    exec "${mpirun[@]}" "build/release/examples/weft_$example" "$@"
fi
echo "$caller: running build/release/examples/weft_$example"
exec "build/release/examples/weft_$example" "$@"
