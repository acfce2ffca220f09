#!/usr/bin/env bash
# What corun writes under the home directory, as the README says: the
# profile store (and its lock file) in ~/.local/share/corun when a policy
# records kernel profiles; corun-cc's precompiled CUDA headers, and
# corun-nvcc's transformed files, in ~/.cache/corun. The home is $HOME;
# CORUN_PROFILE_PATH, XDG_CACHE_HOME and CORUN_CACHE move them; the demo,
# a listing and --help write nothing.
# Usage: cli_home.sh CORUN_BINARY SOURCE_DIR
source "$(dirname "$0")/expect_common.sh"
build=$(cd "$(dirname "$corun")" && pwd)
home=$tmp/home
mkdir -p "$home"
host=$(hostname)
# the files under a folder, relative to it, sorted
files() { (cd "$1" && find . -type f | sed 's|^\./||' | LC_ALL=C sort | tr '\n' ' '); }
# in_home CMD ARGS...: CMD with HOME=$home and no setting that moves a file
in_home() {
  env -u CORUN_PROFILE_PATH -u CORUN_CACHE -u XDG_CACHE_HOME -u CORUN_LAUNCH_STATS \
    HOME="$home" CORUN_PROFILE_TRAIN_RUNS=10 "$@" > "$tmp/out" 2> "$tmp/err"
}

in_home "$corun" --help
in_home "$corun" config
in_home "$corun" demo --backend sim --duration-ms 100
check "demo exits 0" test $? -eq 0
in_home "$corun" profile
check "a listing exits 0" test $? -eq 0
check "--help, config, demo and a listing write nothing: $(files "$home")" \
  test -z "$(files "$home")"

# A policy that needs kernel profiles records them in the store.
store=.local/share/corun/profiles-$host.txt
in_home "$corun" sim --scenario "$src/bench/scenarios/flep-hpf-2kernel.json" --policy flep-hpf --quiet
check "sim flep-hpf exits 0" test $? -eq 0
check "the store and its lock, nothing else: $(files "$home")" \
  test "$(files "$home")" = "$store $store.lock "
in_home "$corun" profile
check "corun profile names the store" grep -q "^store $home/$store: " "$tmp/out"
in_home "$corun" --set profile_path=off sim --scenario "$src/bench/scenarios/flep-hpf-2kernel.json" \
  --policy flep-hpf --quiet
check "profile_path=off: still only the store and its lock" \
  test "$(files "$home")" = "$store $store.lock "
CORUN_PROFILE_PATH=$tmp/elsewhere/p.txt HOME=$home CORUN_PROFILE_TRAIN_RUNS=10 \
  "$corun" sim --scenario "$src/bench/scenarios/flep-hpf-2kernel.json" --policy flep-hpf --quiet \
  > /dev/null 2>&1
check "CORUN_PROFILE_PATH moves the store" test -f "$tmp/elsewhere/p.txt"

# corun-cc: the precompiled CUDA headers, one per side.
if [ -x "$build/corun-cc" ]; then
  rm -rf "$home/.local"
  in_home "$build/corun-cc" "$src/tests/cc/launch_macro.cu" -o "$tmp/t.cu"
  check "corun-cc exits 0: $(head -c 300 "$tmp/err")" test $? -eq 0
  check "corun-cc: two headers in ~/.cache/corun/cc-pch: $(files "$home")" \
    test "$(find "$home/.cache/corun/cc-pch" -name '*.pch' 2> /dev/null | wc -l)" = 2
  check "corun-cc: nothing else" \
    test "$(files "$home" | tr ' ' '\n' | grep -cv '^\.cache/corun/cc-pch/[0-9a-f]*\.pch$')" = 0
  rm -rf "$home/.cache"
  XDG_CACHE_HOME=$tmp/xdg HOME=$home "$build/corun-cc" "$src/tests/cc/launch_macro.cu" \
    -o "$tmp/t.cu" 2> /dev/null
  check "XDG_CACHE_HOME moves the cache" \
    test "$(find "$tmp/xdg/corun/cc-pch" -name '*.pch' | wc -l)" = 2
  CORUN_CACHE=$tmp/cache XDG_CACHE_HOME=$tmp/xdg2 HOME=$home \
    "$build/corun-cc" "$src/tests/cc/launch_macro.cu" -o "$tmp/t.cu" 2> /dev/null
  check "CORUN_CACHE moves it, before XDG_CACHE_HOME" \
    test "$(find "$tmp/cache/cc-pch" -name '*.pch' | wc -l)" = 2
  check "nothing in the home: $(files "$home")" test -z "$(files "$home")"
else
  echo "no corun-cc: its cache is not checked"
fi

# corun-nvcc: the transformed files beside the headers.
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
if [ -x "$build/corun-nvcc" ] && [ -x "$nvcc" ] &&
  ! grep -q "^CORUN_SANITIZE:BOOL=ON" "$build/CMakeCache.txt" 2> /dev/null; then
  rm -rf "$home/.cache"
  printf '__global__ void k(int *p) { p[blockIdx.x] = 1; }\nvoid run(int *p) { k<<<2, 1>>>(p); }\n' \
    > "$tmp/k.cu"
  (cd "$tmp" && in_home env NVCC_REAL="$nvcc" "$build/corun-nvcc" -arch=sm_90 -c k.cu -o k.o)
  check "corun-nvcc exits 0: $(head -c 300 "$tmp/err")" test $? -eq 0
  check "corun-nvcc: a transformed file in ~/.cache/corun: $(files "$home")" \
    test "$(find "$home/.cache/corun" -maxdepth 1 -name '*.cu' | wc -l)" = 1
  check "corun-nvcc: nothing outside ~/.cache/corun" \
    test "$(files "$home" | tr ' ' '\n' | grep -c . )" = \
    "$(files "$home" | tr ' ' '\n' | grep -c '^\.cache/corun/')"
else
  echo "no corun-nvcc or nvcc (or a sanitizer build): its cache is not checked"
fi

expect_done
