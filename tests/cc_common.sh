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
