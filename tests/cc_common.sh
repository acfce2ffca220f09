# cc_common.sh — the start of corun-cc's shell tests, sourced with the
# test's own arguments (CORUN_BINARY SOURCE_DIR). Sets build (the build
# folder), src (the source folder), cc (corun-cc; without it the test is
# skipped, exit 77) and tmp (a folder removed at exit), and points
# CORUN_CACHE into tmp, not at ~/.cache.
set -uo pipefail
build=$(cd "$(dirname "$1")" && pwd)
src=$(cd "$2" && pwd)
cc=$build/corun-cc
[ -x "$cc" ] || { echo "no corun-cc in $build: skipped"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export CORUN_CACHE=$tmp/cache

# For corun-nvcc's tests: sets wrap (corun-nvcc) and nvcc (NVCC, default
# /usr/local/cuda/bin/nvcc, exported as NVCC_REAL); without either the test
# is skipped (exit 77). With "link", a sanitizer build leaves the test to
# the plain build (exit 0): its programs would link an ASan libcorun.
cc_needs_nvcc() {
  wrap=$build/corun-nvcc
  nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
  [ -x "$wrap" ] || { echo "no corun-nvcc in $build: skipped"; exit 77; }
  [ -x "$nvcc" ] || { echo "no nvcc at $nvcc: skipped"; exit 77; }
  export NVCC_REAL=$nvcc
  if [ "${1:-}" = link ] && grep -q "^CORUN_SANITIZE:BOOL=ON" "$build/CMakeCache.txt" 2> /dev/null; then
    echo "sanitizer build: left to the plain build (programs would link an ASan libcorun)"
    exit 0
  fi
}

# check COMMAND...: runs it; where it fails, says so and sets fail.
fail=0
check() { if ! "$@"; then echo "FAIL: $*"; fail=1; fi; }
