#!/usr/bin/env bash
# Golden tests of corun-cc (docs/corun-cc.md): every tests/cc/NAME.cu is
# transformed and compared with tests/cc/NAME.expected (a transformed file)
# or, for refused files, its messages with tests/cc/NAME.err (exit 1, no
# output written); warnings of a transformed file are compared with
# tests/cc/NAME.warn (none allowed without it). NAME.expected missing and
# NAME.err missing means the file must come back unchanged, byte for byte.
# Each file is transformed with --header-dir: the copies of the project
# headers it writes are compared with tests/cc/NAME.headers/ (none allowed
# without it, none written for a refused file). Then every transformed output is
# compiled with nvcc -arch=sm_90 (skipped, exit 77, without nvcc; skipped in
# sanitizer builds, whose plain build already does it).
#
# Usage: cli_cc_golden.sh CORUN_BINARY SOURCE_DIR
#   CORUN_CC_GOLDEN_UPDATE=1 rewrites the expected files from the current
#   output (then review the diff).
set -uo pipefail
corun=$1
src=$2
build=$(cd "$(dirname "$corun")" && pwd)
src=$(cd "$src" && pwd)
cc=$build/corun-cc
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
if [ ! -x "$cc" ]; then
  echo "no corun-cc in $build (libclang missing?): skipped"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export CORUN_CACHE=$tmp/cache # precompiled CUDA headers: here, not in ~/.cache
cd "$src/tests/cc" || exit 1

fail=0
cases=0
outputs=()
for in in *.cu; do
  name=${in%.cu}
  cases=$((cases + 1))
  out=$tmp/$name.cu
  "$cc" "$in" -o "$out" --header-dir "$tmp/$name.h" > "$tmp/$name.log" 2>&1
  rc=$?
  if [ "${CORUN_CC_GOLDEN_UPDATE:-0}" = 1 ]; then
    rm -f "$name.expected" "$name.err" "$name.warn"
    rm -rf "$name.headers"
    if [ $rc -eq 0 ] && [ -d "$tmp/$name.h" ]; then
      cp -r "$tmp/$name.h" "$name.headers"
    fi
    if [ $rc -eq 1 ]; then
      cp "$tmp/$name.log" "$name.err"
    elif [ $rc -eq 0 ] && ! cmp -s "$in" "$out"; then
      cp "$out" "$name.expected"
    fi
    if [ $rc -eq 0 ] && [ -s "$tmp/$name.log" ]; then
      cp "$tmp/$name.log" "$name.warn"
    fi
  fi
  if [ -f "$name.err" ]; then
    if [ $rc -ne 1 ]; then
      echo "FAIL $name: expected a refusal (exit 1), got exit $rc"
      fail=1
    elif [ -e "$out" ] || [ -e "$tmp/$name.h" ]; then
      echo "FAIL $name: refused but wrote an output"
      fail=1
    elif ! diff -u "$name.err" "$tmp/$name.log"; then
      echo "FAIL $name: messages differ from $name.err"
      fail=1
    else
      echo "ok   $name (refused: $(head -1 "$name.err" | sed 's/.*corun-cc: //; s/:.*//'))"
    fi
    continue
  fi
  if [ $rc -ne 0 ]; then
    echo "FAIL $name: exit $rc"
    cat "$tmp/$name.log"
    fail=1
    continue
  fi
  if [ -f "$name.warn" ]; then
    if ! diff -u "$name.warn" "$tmp/$name.log"; then
      echo "FAIL $name: warnings differ from $name.warn"
      fail=1
      continue
    fi
  elif [ -s "$tmp/$name.log" ]; then
    echo "FAIL $name: unexpected messages:"
    cat "$tmp/$name.log"
    fail=1
    continue
  fi
  if [ -d "$name.headers" ] || [ -d "$tmp/$name.h" ]; then
    if ! diff -ru "$name.headers" "$tmp/$name.h"; then
      echo "FAIL $name: header copies differ from $name.headers/"
      fail=1
      continue
    fi
  fi
  if [ -f "$name.expected" ]; then
    if ! diff -u "$name.expected" "$out"; then
      echo "FAIL $name: output differs from $name.expected"
      fail=1
      continue
    fi
    outputs+=("$out")
    echo "ok   $name"
  else
    if ! cmp "$in" "$out"; then
      echo "FAIL $name: a file without kernels must be copied unchanged"
      fail=1
      continue
    fi
    echo "ok   $name (unchanged)"
  fi
done
echo "$cases golden cases"

# nothing written for a refused file, and a missing input is an error
if "$cc" does-not-exist.cu -o "$tmp/x.cu" 2> "$tmp/missing.log"; then
  echo "FAIL: a missing input was accepted"
  fail=1
fi
grep -q "cannot open" "$tmp/missing.log" || { echo "FAIL: no message for a missing input"; fail=1; }
"$cc" --help | grep -q "usage: corun-cc" || { echo "FAIL: --help"; fail=1; }
"$cc" --bogus 2> /dev/null
[ $? -eq 2 ] || { echo "FAIL: an unknown option must exit 2"; fail=1; }
# CORUN_CC_STRICT=1 refuses a launch corun-cc would leave unchanged (a kernel
# of a header), writing nothing; a value outside [0, 1] is a usage error
CORUN_CC_STRICT=1 "$cc" header_kernel_launch.cu -o "$tmp/strict.cu" > "$tmp/strict.log" 2>&1
[ $? -eq 1 ] && [ ! -e "$tmp/strict.cu" ] &&
  grep -q "header_kernel_launch.cu:5:5: error: .*CORUN_CC_STRICT=1" "$tmp/strict.log" ||
  { echo "FAIL: CORUN_CC_STRICT=1"; cat "$tmp/strict.log"; fail=1; }
# ... and a launch through a pointer that no kernel of the file can be
CORUN_CC_STRICT=1 "$cc" fnptr_no_match.cu -o "$tmp/strict.cu" > "$tmp/strict.log" 2>&1
[ $? -eq 1 ] && [ ! -e "$tmp/strict.cu" ] &&
  [ "$(grep -c "fnptr_no_match.cu:.*: error: .*function pointer: .*CORUN_CC_STRICT=1" "$tmp/strict.log")" -eq 3 ] ||
  { echo "FAIL: CORUN_CC_STRICT=1 on a launch through a pointer"; cat "$tmp/strict.log"; fail=1; }
# ... and, with a header folder, a kernel of a header it cannot take and
# that kernel's launch, writing no copy
CORUN_CC_STRICT=1 "$cc" header_refused.cu -o "$tmp/strict.cu" --header-dir "$tmp/strict.h" \
  > "$tmp/strict.log" 2>&1
[ $? -eq 1 ] && [ ! -e "$tmp/strict.cu" ] && [ ! -e "$tmp/strict.h" ] &&
  grep -q "header_refused_k.cuh:4:.*: error: corun-cc: ::blockIdx" "$tmp/strict.log" &&
  grep -q "header_refused.cu:7:5: error: .*CORUN_CC_STRICT=1" "$tmp/strict.log" ||
  { echo "FAIL: CORUN_CC_STRICT=1 with a header folder"; cat "$tmp/strict.log"; fail=1; }
CORUN_CC_STRICT=2 "$cc" header_kernel_launch.cu -o "$tmp/strict.cu" > "$tmp/strict.log" 2>&1
[ $? -eq 2 ] && grep -q "CORUN_CC_STRICT: 2 is outside \[0, 1\]" "$tmp/strict.log" ||
  { echo "FAIL: CORUN_CC_STRICT=2 must exit 2"; cat "$tmp/strict.log"; fail=1; }

if [ $fail -ne 0 ]; then
  exit 1
fi
if grep -q "^CORUN_SANITIZE:BOOL=ON" "$build/CMakeCache.txt" 2> /dev/null; then
  echo "sanitizer build: nvcc compile check left to the plain build"
  exit 0
fi
if [ ! -x "$nvcc" ]; then
  echo "no nvcc at $nvcc: compile check skipped"
  exit 77
fi
# Every transformed output must compile for sm_90; two nvcc at a time.
mkdir -p "$tmp/obj"
printf '%s\n' "${outputs[@]}" |
  (cd "$tmp/obj" && xargs -P 2 -I{} sh -c \
    '"$0" -arch=sm_90 -std=c++17 -I"$1/include" -I"$(dirname "{}")/$(basename "{}" .cu).h" -c "{}" -o "$(basename "{}" .cu).o" > "$(basename "{}" .cu).nvcc.log" 2>&1 || { echo "FAIL nvcc {}"; cat "$(basename "{}" .cu).nvcc.log"; exit 255; }' \
    "$nvcc" "$src") || fail=1
compiled=$(ls "$tmp/obj"/*.o 2> /dev/null | wc -l)
echo "$compiled of ${#outputs[@]} transformed outputs compile with nvcc -arch=sm_90"
[ "$compiled" -eq ${#outputs[@]} ] || fail=1
exit $fail
