#!/usr/bin/env bash
# corun-nvcc as a drop-in nvcc: transforms .cu inputs into its cache (a
# second build hits the cache), keeps the user's output names for -c,
# passes other inputs and options through, links libcorun, refuses or
# (CORUN_NVCC_ON_REFUSAL=plain) compiles refused files unchanged, and
# leaves files without kernels alone. Compiles and links only: no GPU.
#
# Usage: cli_cc_nvcc.sh CORUN_BINARY SOURCE_DIR
set -uo pipefail
build=$(cd "$(dirname "$1")" && pwd)
src=$(cd "$2" && pwd)
wrap=$build/corun-nvcc
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
if [ ! -x "$wrap" ]; then
  echo "no corun-nvcc in $build: skipped"
  exit 77
fi
if [ ! -x "$nvcc" ]; then
  echo "no nvcc at $nvcc: skipped"
  exit 77
fi
if grep -q "^CORUN_SANITIZE:BOOL=ON" "$build/CMakeCache.txt" 2> /dev/null; then
  echo "sanitizer build: left to the plain build (programs would link an ASan libcorun)"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export CORUN_CACHE=$tmp/cache NVCC_REAL=$nvcc
fail=0
check() { if ! "$@"; then echo "FAIL: $*"; fail=1; fi; }

mkdir -p "$tmp/proj/inc"
cat > "$tmp/proj/inc/scale.h" <<'H'
#define SCALE 3
H
cat > "$tmp/proj/k.cu" <<'K'
#include "inc/scale.h"
#include <cstdio>
__global__ void k(int *p) { p[blockIdx.x] = SCALE * (int)blockIdx.x; }
int run(int *p) { k<<<4, 1>>>(p); return cudaGetLastError() == cudaSuccess; }
K
cat > "$tmp/proj/main.cpp" <<'M'
int run(int *p);
int main() { return run(nullptr) ? 0 : 0; }
M
cat > "$tmp/proj/host.cu" <<'H'
#include <cstdio>
int host_only() { return printf("no kernels\n"); }
H
cd "$tmp/proj" || exit 1

# -c without -o: the object is named after the source, in the current folder
check "$wrap" -arch=sm_90 -std=c++17 -c k.cu
check test -f k.o
entries=$(ls "$CORUN_CACHE"/*.cu 2> /dev/null | wc -l)
check test "$entries" -eq 1
# the cached file is the transformed one; a second build reuses it
check grep -q "k__corun_launch" "$CORUN_CACHE"/*.cu
before=$(stat -c %Y "$CORUN_CACHE"/*.cu)
sleep 1
check "$wrap" -arch=sm_90 -std=c++17 -c k.cu -o k2.o
check test "$(stat -c %Y "$CORUN_CACHE"/*.cu)" = "$before"
# a change to corun's device headers (the worker loop's registers decide the
# pins) makes a new entry: a wrapper whose include folder is a copy we edit
cp -r "$(sed -n "s/^corun_include='\(.*\)'$/\1/p" "$wrap")" "$tmp/inc-copy"
sed "s|^corun_include=.*|corun_include='$tmp/inc-copy'|" "$wrap" > "$tmp/wrap2"
chmod +x "$tmp/wrap2"
check "$tmp/wrap2" -arch=sm_90 -std=c++17 -c k.cu -o k3.o
n1=$(ls "$CORUN_CACHE"/*.cu | wc -l)
echo "/* edited */" >> "$tmp/inc-copy/corun/corun_device.cuh"
check "$tmp/wrap2" -arch=sm_90 -std=c++17 -c k.cu -o k4.o
check test "$(ls "$CORUN_CACHE"/*.cu | wc -l)" -eq $((n1 + 1))
# a host compiler input and a link step that adds libcorun
check g++ -c main.cpp -o main.o
check "$wrap" -arch=sm_90 -o prog k.o main.o
check test -x prog
# compile and link in one call, as gpu/apps does
check "$wrap" -O2 -arch=sm_90 -std=c++17 -o prog2 k.cu main.cpp
check test -x prog2
# __FILE__ and messages keep the user's file name
check "$wrap" -arch=sm_90 -std=c++17 -E k.cu -o k.ii
check grep -q '"k.cu"' k.ii
# a file without kernels is compiled as it is
check "$wrap" -arch=sm_90 -c host.cu -o host.o
check grep -q "no kernels" "$CORUN_CACHE"/*.cu
# a refused file fails the build, or is compiled unchanged on request
cp "$src/tests/cc/refuse_device_blockidx.cu" bad.cu
if "$wrap" -arch=sm_90 -c bad.cu -o bad.o 2> bad.log; then
  echo "FAIL: a refused file was compiled"
  fail=1
fi
check grep -q "error: corun-cc: __device__ function reading blockIdx" bad.log
check env CORUN_NVCC_ON_REFUSAL=plain "$wrap" -arch=sm_90 -c bad.cu -o bad.o
check test -f bad.o
# its settings come from the settings table, through corun-cc: a bad value
# stops the build and says which, where it once meant a silent default
cc=$(sed -n "s/^corun_cc='\(.*\)'$/\1/p" "$wrap")
for bad in CORUN_NVCC_PIN=yes CORUN_NVCC_ON_REFUSAL=maybe CORUN_NVCC_VERBOSE=2; do
  rm -f k5.o
  if env "$bad" "$wrap" -arch=sm_90 -c k.cu -o k5.o 2> set.log; then
    echo "FAIL: $bad was taken"
    fail=1
  fi
  check grep -q "${bad%%=*}" set.log
  check test ! -e k5.o
done
check env CORUN_NVCC_VERBOSE=1 "$wrap" -arch=sm_90 -c k.cu -o k5.o 2> verbose.log
check grep -q "^corun-nvcc: $NVCC_REAL " verbose.log
check env CORUN_NVCC_KEEP="$tmp/keep" "$wrap" -arch=sm_90 -c k.cu -o k6.o
check grep -q "k__corun_launch" "$tmp/keep/k.cu"
# one default for the cache folder: corun-nvcc's is corun-cc's
check test "$(env -u CORUN_CACHE XDG_CACHE_HOME="$tmp/xdg" "$cc" --setting cache)" = "$tmp/xdg/corun"
check env -u CORUN_CACHE XDG_CACHE_HOME="$tmp/xdg" CORUN_NVCC_PIN=0 "$wrap" -arch=sm_90 -c k.cu -o k7.o
check test "$(ls "$tmp/xdg/corun"/*.cu 2> /dev/null | wc -l)" -eq 1
# a file that launches a kernel of a header: said on every build, the cached
# one too; CORUN_CC_STRICT=1 fails the build (the cache keeps the two apart)
printf '__global__ void hk(int *p) { p[0] = 1; }\n' > hk.cuh
printf '#include "hk.cuh"\nvoid go(int *p) { hk<<<1, 1>>>(p); }\n' > uses_hk.cu
for n in 1 2; do
  check "$wrap" -arch=sm_90 -c uses_hk.cu -o uses_hk$n.o 2> uses_hk$n.log
  check grep -q "uses_hk.cu:2:.*launch of a kernel defined elsewhere: kernel 'hk'" uses_hk$n.log
done
if CORUN_CC_STRICT=1 "$wrap" -arch=sm_90 -c uses_hk.cu -o uses_hk3.o 2> uses_hk3.log; then
  echo "FAIL: CORUN_CC_STRICT=1 built a launch left unchanged"
  fail=1
fi
check grep -q "error: corun-cc: launch of a kernel defined elsewhere" uses_hk3.log
check test ! -e uses_hk3.o
# nvcc's own options still work
check "$wrap" --version
exit $fail
