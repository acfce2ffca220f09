#!/usr/bin/env bash
# corun-cc's precompiled CUDA headers (src/cc/pch.c): the output is the same
# byte for byte with and without them; the first run of a flag set builds
# one per side, later runs load them, other flags get their own; a damaged
# header is noticed, removed and rebuilt; an unwritable folder or --no-pch
# parses as before and writes nothing; flags under which the headers do not
# parse are remembered (.bad) and not retried; parallel runs leave no
# temporary files.
#
# Usage: cli_cc_pch.sh CORUN_BINARY SOURCE_DIR
# shellcheck source=tests/cc_common.sh
. "$(dirname "${BASH_SOURCE[0]}")/cc_common.sh"
count() { find "$1" -name "$2" 2> /dev/null | wc -l; }
says() { grep -q "CUDA headers: host $2, device $2)" "$1"; }

in=$src/tests/cc/launch_macro.cu
pch=$tmp/pch

"$cc" --no-pch -v "$in" -o "$tmp/plain.cu" 2> "$tmp/plain.log"
check says "$tmp/plain.log" parsed
check test ! -e "$CORUN_CACHE"

"$cc" --pch-dir "$pch" -v "$in" -o "$tmp/first.cu" 2> "$tmp/first.log"
check says "$tmp/first.log" "precompiled now"
check test "$(count "$pch" '*.pch')" = 2
"$cc" --pch-dir "$pch" -v "$in" -o "$tmp/second.cu" 2> "$tmp/second.log"
check says "$tmp/second.log" precompiled
check cmp "$tmp/plain.cu" "$tmp/first.cu"
check cmp "$tmp/plain.cu" "$tmp/second.cu"

# every golden transformed file: the same output through the headers
for f in "$src"/tests/cc/*.expected; do
  base=${f%.expected}
  "$cc" --pch-dir "$pch" "$base.cu" -o "$tmp/g.cu" --line-name "$(basename "$base.cu")" \
    2> /dev/null
  "$cc" --no-pch "$base.cu" -o "$tmp/p.cu" --line-name "$(basename "$base.cu")" 2> /dev/null
  check cmp "$tmp/g.cu" "$tmp/p.cu"
done
check test "$(count "$pch" '*.pch')" = 2

# other flags, other headers
"$cc" --pch-dir "$pch" -DCORUN_PCH_TEST=1 -v "$in" -o "$tmp/d.cu" 2> "$tmp/d.log"
check says "$tmp/d.log" "precompiled now"
check test "$(count "$pch" '*.pch')" = 4

# damaged: noticed, parsed without, removed; the next run builds it again
for f in "$pch"/*.pch; do head -c 4096 "$f" > "$f.x" && mv "$f.x" "$f"; done
"$cc" --pch-dir "$pch" -v "$in" -o "$tmp/damaged.cu" 2> "$tmp/damaged.log"
check says "$tmp/damaged.log" parsed
check cmp "$tmp/plain.cu" "$tmp/damaged.cu"
check test "$(grep -c error "$tmp/damaged.log")" = 0
"$cc" --pch-dir "$pch" -v "$in" -o "$tmp/rebuilt.cu" 2> "$tmp/rebuilt.log"
check says "$tmp/rebuilt.log" "precompiled now"

# a folder that cannot be made: parsed as before
"$cc" --pch-dir /proc/corun-no-such-dir -v "$in" -o "$tmp/ro.cu" 2> "$tmp/ro.log"
check says "$tmp/ro.log" parsed
check cmp "$tmp/plain.cu" "$tmp/ro.cu"

# headers that do not parse under these flags: refused as before, tried once
"$cc" --pch-dir "$pch" '-Dstd=}' -v "$in" -o "$tmp/bad.cu" 2> "$tmp/bad.log"
check test $? = 1
check test ! -e "$tmp/bad.cu"
check test "$(count "$pch" '*.pch.bad')" = 2
"$cc" --pch-dir "$pch" '-Dstd=}' -v "$in" -o "$tmp/bad.cu" 2> "$tmp/bad2.log"
check says "$tmp/bad2.log" parsed

# parallel first runs into one folder: same output, no temporary files left
par=$tmp/par
for i in 1 2 3 4; do
  "$cc" --pch-dir "$par" "$in" -o "$tmp/par$i.cu" &
done
wait
for i in 1 2 3 4; do check cmp "$tmp/plain.cu" "$tmp/par$i.cu"; done
check test "$(count "$par" '*.pch')" = 2
check test "$(count "$par" '*.tmp')" = 0

# the default folder is $CORUN_CACHE/cc-pch
"$cc" "$in" -o "$tmp/def.cu"
check test "$(count "$CORUN_CACHE/cc-pch" '*.pch')" = 2
"$cc" --help | grep -q -- "--pch-dir DIR" || { echo "FAIL: --help lacks --pch-dir"; fail=1; }
"$cc" --pch-dir 2> "$tmp/arg.log"
check test $? = 2
check grep -q "needs a value" "$tmp/arg.log"

[ $fail = 0 ] && echo "ok: precompiled CUDA headers"
exit $fail
