#!/usr/bin/env bash
# tests/gpu_label.sh SRCDIR: what GPU results are labelled with
# (gpu_label, scripts/gpu-build.sh): the commit where the files are its;
# "+changes (tree T)" where they are not, T the tree a commit of those same
# files has (so the commit is found where the results are read); the label
# CORUN_COMMIT gives; "unknown" outside git.
set -uo pipefail
src=$(cd "${1:?usage: gpu_label.sh SRCDIR}" && pwd)
# shellcheck source=scripts/gpu-build.sh
source "$src/scripts/gpu-build.sh"
unset CORUN_COMMIT
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
check() { if ! "$@"; then echo "FAIL: $*"; fail=1; fi; }

cd "$tmp" || exit 1
mkdir repo outside
cd repo || exit 1
git init -q . && git config user.email t@t && git config user.name t
printf 'build/\n' > .gitignore
echo one > a.txt
git add -A && git commit -qm one
head=$(git rev-parse --short HEAD)
check test "$(gpu_label)" = "$head"

# a changed file and a new one: +changes, and the tree of a commit of them
echo two > a.txt
echo new > b.txt
mkdir -p build && echo ignored > build/x
label=$(gpu_label)
tree=$(echo "$label" | sed -n 's/^[0-9a-f]*+changes (tree \([0-9a-f]*\))$/\1/p')
check test -n "$tree"
check test "${label%%+*}" = "$head"
git add -A && git commit -qm two
check test "$(git rev-parse 'HEAD^{tree}' | cut -c1-12)" = "$tree"
# that commit's files: its own commit again, nothing staged or written meanwhile
check test "$(gpu_label)" = "$(git rev-parse --short HEAD)"
check test -z "$(git status --porcelain)"

check test "$(CORUN_COMMIT=abc123 gpu_label)" = abc123
cd ../outside && check test "$(GIT_CEILING_DIRECTORIES=$tmp gpu_label)" = unknown

[ $fail = 0 ] && echo "gpu_label: commit, +changes with the files' tree, CORUN_COMMIT, unknown"
exit $fail
