#!/usr/bin/env bash
# The three multi-file projects of tests/cc-projects build with
# `make NVCC=corun-nvcc` as they do with nvcc: kernels in a project header
# included by two files, a static library of kernels, and separate
# compilation with -rdc=true. No GPU here, so what is checked is what a
# build shows: both builds succeed; corun-nvcc says nothing; every kernel's
# worker entries (NAME__corun, NAME__corun_ahead for a kernel with
# barriers) are in the corun build's program and in none of the plain
# one's; and the transformed sources kept with CORUN_NVCC_KEEP launch
# through corun, with no <<<...>>> left. Running both builds and comparing
# their checksums needs a GPU: scripts/cc-projects.sh.
#
# Usage: cli_cc_projects.sh CORUN_BINARY SOURCE_DIR
source "$(dirname "$0")/cc_common.sh"
cc_needs_nvcc link

# the worker entries each project's program must hold ("|" between), and
# the launchers its kept sources must call
declare -A entries=(
  [headers]="fill__corun<unsigned int>(|scale__corun<unsigned int>(|block_sum__corun(|block_sum__corun_ahead("
  [staticlib]="saxpy__corun(|histogram__corun(|histogram__corun_ahead("
  [rdc]="stencil__corun("
)
declare -A launchers=(
  [headers]="fill__corun_launch scale__corun_launch block_sum__corun_launch"
  [staticlib]="saxpy__corun_launch histogram__corun_launch"
  [rdc]="stencil__corun_launch"
)

for p in headers staticlib rdc; do
  dir=$src/tests/cc-projects/$p
  if ! make -s -C "$dir" NVCC="$nvcc" BUILD="$tmp/plain/$p" > "$tmp/$p.plain.log" 2>&1; then
    echo "FAIL $p: the nvcc build failed"
    cat "$tmp/$p.plain.log"
    fail=1
    continue
  fi
  if ! CORUN_NVCC_KEEP=$tmp/keep/$p make -s -C "$dir" NVCC="$wrap" BUILD="$tmp/corun/$p" \
    > "$tmp/$p.corun.log" 2>&1; then
    echo "FAIL $p: the corun-nvcc build failed"
    cat "$tmp/$p.corun.log"
    fail=1
    continue
  fi
  # make -s prints only what the compilers say: corun-nvcc and corun-cc
  # have nothing to say of these projects
  if [ -s "$tmp/$p.corun.log" ]; then
    echo "FAIL $p: corun-nvcc said:"
    cat "$tmp/$p.corun.log"
    fail=1
  fi
  prog=$tmp/corun/$p/$p
  check test -x "$prog"
  check test -x "$tmp/plain/$p/$p"
  nm -C "$prog" > "$tmp/$p.corun.nm" 2>&1
  nm -C "$tmp/plain/$p/$p" > "$tmp/$p.plain.nm" 2>&1
  IFS='|' read -ra want <<< "${entries[$p]}"
  for e in "${want[@]}"; do
    check grep -qF " $e" "$tmp/$p.corun.nm"
  done
  check test "$(grep -c "__corun" "$tmp/$p.plain.nm")" -eq 0
  for l in ${launchers[$p]}; do
    check grep -q "$l[<(]" -r "$tmp/keep/$p"
  done
  check test "$(cat "$tmp/keep/$p"/* | grep -c '<<<')" -eq 0
  echo "ok   $p: $(ls "$tmp/keep/$p" | tr '\n' ' ')"
done

# relocatable device code: the device link sets the registers (stencil's
# call to smooth of another file raised its worker's from 32 to 44 on the
# H100), so the worker is capped where its plain kernel's blocks stay
check grep -q "__maxnreg__(32) stencil__corun(" "$tmp/keep/rdc/stencil.cu"
check test "$(cat "$tmp/keep/headers"/* "$tmp/keep/staticlib"/* | grep -c "__maxnreg__")" -eq 0
# the library holds the workers itself, and the header copies of the two
# files of headers/ are kept under names of their own
check test "$(nm -C "$tmp/corun/staticlib/libops.a" | grep -c " T .*__corun(")" -eq 2
check test "$(ls "$tmp/keep/headers"/kernels.corun-*.cuh | wc -l)" -eq 2
# a second build of every project comes from the cache: the same objects
for p in headers staticlib rdc; do
  rm -rf "$tmp/again"
  CORUN_NVCC_VERBOSE=1 make -s -C "$src/tests/cc-projects/$p" NVCC="$wrap" BUILD="$tmp/again" \
    > "$tmp/$p.again.log" 2>&1
  check test "$(grep -c "corun-nvcc: cached" "$tmp/$p.again.log")" -ge 1
  check test "$(grep -c "corun-cc " "$tmp/$p.again.log")" -eq 0
done
exit $fail
