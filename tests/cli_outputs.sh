#!/usr/bin/env bash
# Outputs never replace what is not theirs (src/common/output.h): corun-cc's
# -o and the profile store replace a regular file through a temporary one,
# follow a link to one and keep the link, write a device or FIFO in place
# and never move it, refuse a directory; `corun profile` that only lists
# creates, locks and moves nothing, and reports a corrupt store.
# Usage: cli_outputs.sh CORUN_BINARY SOURCE_DIR
set -uo pipefail
corun=$1
src=$2
build=$(cd "$(dirname "$corun")" && pwd)
cc=$build/corun-cc
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export CORUN_CACHE=$tmp/cache
export CORUN_PROFILE_TRAIN_RUNS=10
train=(profile --train-scenario "$src/bench/scenarios/flep-hpf-2kernel.json" --app nn_large --json)
fail=0
check() { if ! "$@"; then echo "FAIL: $*"; fail=1; fi; }
# every name under a folder, with its type and contents
listing() {
  (cd "$1" && find . -printf '%p %y\n' | LC_ALL=C sort && find . -type f -exec cksum {} + | LC_ALL=C sort)
}

# --- the profile store ---------------------------------------------------------
store=$tmp/home/.local/share/corun
export CORUN_PROFILE_PATH=$store/profiles.txt
mkdir -p "$tmp/home"

# Listing a store that is not there creates nothing.
"$corun" profile > "$tmp/out" 2> "$tmp/err"
check test $? = 0
check grep -q "0 runs" "$tmp/out"
check test ! -e "$tmp/home/.local"

# A corrupt store is reported by listing (exit 1), left as it is, no lock
# file made; also in a folder that may not be written.
mkdir -p "$store"
echo garbage > "$CORUN_PROFILE_PATH"
before=$(listing "$tmp/home")
for args in profile "profile --json"; do
  # shellcheck disable=SC2086
  "$corun" $args > "$tmp/out" 2> "$tmp/err"
  check test $? = 1
  check grep -q "profiles.txt is corrupt" "$tmp/err"
  check test "$(listing "$tmp/home")" = "$before"
done
chmod a-w "$store"
"$corun" profile > "$tmp/out" 2> "$tmp/err"
check test $? = 1
check grep -q "corrupt" "$tmp/err"
chmod u+w "$store"
check test "$(listing "$tmp/home")" = "$before"

# Training writes: it moves the corrupt store aside and starts a new one.
"$corun" "${train[@]}" > "$tmp/out" 2> "$tmp/err"
check test $? = 0
check grep -q "moved to .*profiles.txt.corrupt-" "$tmp/err"
check test -f "$CORUN_PROFILE_PATH"
"$corun" profile > "$tmp/out" 2> "$tmp/err"
check test $? = 0
check grep -qE "^sim +nn " "$tmp/out"

# A store that links to a file: written there, the link kept.
rm -f "$store"/*
echo garbage > "$tmp/elsewhere.txt"
ln -s "$tmp/elsewhere.txt" "$CORUN_PROFILE_PATH"
"$corun" "${train[@]}" > "$tmp/out" 2> "$tmp/err"
check test $? = 0
check test -L "$CORUN_PROFILE_PATH"
check grep -q "^corun-profiles 1" "$tmp/elsewhere.txt"
check test "$(find "$tmp" -maxdepth 1 -name "elsewhere.txt.corrupt-*" | wc -l)" = 1

# A store that links to /dev/null (an empty, so corrupt, file) is never
# moved: training fails and says so; /dev/null stays a device. (Not tried
# when something else has already made /dev/null a regular file: a regular
# file is set aside.)
if [ -c /dev/null ]; then
  rm -f "$CORUN_PROFILE_PATH"
  ln -s /dev/null "$CORUN_PROFILE_PATH"
  "$corun" "${train[@]}" > "$tmp/out" 2> "$tmp/err"
  check test $? = 1
  check grep -q "not a regular file: not moved aside" "$tmp/err"
  check test -L "$CORUN_PROFILE_PATH"
  check test -c /dev/null
  check test "$(find "$store" -name "*corrupt*" | wc -l)" = 0
else
  echo "note: /dev/null is not a character device (something replaced it): store part skipped"
fi

# --- corun-cc -o -------------------------------------------------------------
if [ -x "$cc" ]; then
  mkdir "$tmp/cc"
  cd "$tmp/cc" || exit 1
  echo 'int f(void) { return 1; }' > plain.cu
  # a regular file: replaced
  echo old > out.cu
  "$cc" plain.cu -o out.cu
  check test $? = 0
  check cmp -s plain.cu out.cu
  # a link to a regular file: the file written, the link kept
  echo old > target.cu
  ln -s target.cu link.cu
  "$cc" plain.cu -o link.cu
  check test $? = 0
  check test -L link.cu
  check cmp -s plain.cu target.cu
  # a link to /dev/full: written in place, which fails (exit 3); link kept
  if [ -c /dev/full ]; then
    ln -s /dev/full full.cu
    "$cc" plain.cu -o full.cu 2> full.log
    check test $? = 3
    check grep -q "cannot write full.cu: No space left on device" full.log
    check test -L full.cu
  fi
  # a FIFO: written in place, to its reader
  mkfifo fifo.cu
  timeout 20 cat fifo.cu > got.cu &
  reader=$!
  "$cc" plain.cu -o fifo.cu
  check test $? = 0
  wait "$reader"
  check cmp -s plain.cu got.cu
  check test -p fifo.cu
  # a directory: refused, left as it is
  mkdir dir.cu
  "$cc" plain.cu -o dir.cu 2> dir.log
  check test $? = 3
  check grep -q "cannot write dir.cu: it is a directory" dir.log
  check test -d dir.cu
  check test -z "$(ls dir.cu)"
  # character devices, where one may be made (root): written in place
  if mknod null.cu c 1 3 2> /dev/null && mknod devfull.cu c 1 7; then
    "$cc" plain.cu -o null.cu
    check test $? = 0
    check test -c null.cu
    "$cc" plain.cu -o devfull.cu 2> devfull.log
    check test $? = 3
    check test -c devfull.cu
  fi
  check test -z "$(find . -name '*.tmp.*')"
else
  echo "no corun-cc in $build: its part skipped"
fi
[ "$fail" -eq 0 ] && echo ok
exit "$fail"
