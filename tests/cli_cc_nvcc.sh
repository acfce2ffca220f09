#!/usr/bin/env bash
# corun-nvcc as a drop-in nvcc: transforms .cu inputs into its cache (a
# second build hits the cache), keeps the user's output names for -c,
# passes other inputs and options through, links libcorun, refuses or
# (CORUN_NVCC_ON_REFUSAL=plain) compiles refused files unchanged, and
# leaves files without kernels alone. Compiles and links only: no GPU.
#
# Usage: cli_cc_nvcc.sh CORUN_BINARY SOURCE_DIR
source "$(dirname "$0")/cc_common.sh"
cc_needs_nvcc link

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
# a kernel of a project header goes through corun: the header is
# transformed into a copy that the cached file includes; two files that
# include it compile and link in one call (each finds its own copies), and
# a change to the header makes a new entry
printf 'static __global__ void hk(int *p) { p[0] = 1; }\n' > hk.cuh
printf '#include "hk.cuh"\nvoid go(int *p) { hk<<<1, 1>>>(p); }\n' > uses_hk.cu
printf '#include "hk.cuh"\nvoid go(int *p);\nint main() { go(nullptr); hk<<<1, 1>>>(nullptr); }\n' \
  > main_hk.cu
check "$wrap" -arch=sm_90 -c uses_hk.cu -o uses_hk.o 2> uses_hk.log
check test ! -s uses_hk.log
check grep -q "hk__corun_launch(::corun::config(1, 1), p)" "$CORUN_CACHE"/*.cu
check grep -q "hk__corun(const corun_worker_arg corun_wa, int \*p)" "$CORUN_CACHE"/*.h/hk.corun-*.cuh
check "$wrap" -arch=sm_90 -o two_hk uses_hk.cu main_hk.cu 2> two_hk.log
check test ! -s two_hk.log
check test -x two_hk
check test "$(nm -C two_hk | grep -c " t hk__corun(corun_worker_arg, int\*)")" -eq 2
printf 'static __global__ void hk(int *p) { p[0] = 2; }\n' > hk.cuh
check "$wrap" -arch=sm_90 -c uses_hk.cu -o uses_hk.o
check grep -q "p\[0\] = 2" $(ls -t "$CORUN_CACHE"/*.h/hk.corun-*.cuh | head -1)
# a header kernel corun cannot take, and its launch: said on every build,
# the cached one too; CORUN_CC_STRICT=1 fails the build (the cache keeps
# the two apart)
printf '__global__ void hq(int *p) { p[0] = ::blockIdx.x; }\n' > hq.cuh
printf '#include "hq.cuh"\nvoid go(int *p) { hq<<<1, 1>>>(p); }\n' > uses_hq.cu
for n in 1 2; do
  check "$wrap" -arch=sm_90 -c uses_hq.cu -o uses_hq$n.o 2> uses_hq$n.log
  check grep -q "hq.cuh:1:.*warning: corun-cc: ::blockIdx.*left as it is" uses_hq$n.log
  check grep -q "uses_hq.cu:2:.*launch of a kernel defined elsewhere: kernel 'hq'" uses_hq$n.log
done
if CORUN_CC_STRICT=1 "$wrap" -arch=sm_90 -c uses_hq.cu -o uses_hq3.o 2> uses_hq3.log; then
  echo "FAIL: CORUN_CC_STRICT=1 built a launch left unchanged"
  fail=1
fi
check grep -q "error: corun-cc: launch of a kernel defined elsewhere" uses_hq3.log
check test ! -e uses_hq3.o
# the macros nvcc defines for -rdc, -dc, --expt-relaxed-constexpr and
# --extended-lambda reach corun-cc's parse: a kernel kept under them is
# transformed, not refused
for pair in "__CUDACC_RDC__ -rdc=true" "__CUDACC_RDC__ -dc" \
  "__CUDACC_RELAXED_CONSTEXPR__ --expt-relaxed-constexpr" "__CUDACC_EXTENDED_LAMBDA__ --extended-lambda"; do
  m=${pair%% *}
  f=${pair#* }
  printf '#ifndef %s\n#error %s missing\n#endif\n__global__ void mk(int *p) { p[0] = 1; }\nvoid go(int *p) { mk<<<1, 1>>>(p); }\n' \
    "$m" "$m" > macro.cu
  check "$wrap" -arch=sm_90 "$f" -c macro.cu -o macro.o 2> macro.log
  check test ! -s macro.log
  check grep -q "mk__corun_launch" "$(ls -t "$CORUN_CACHE"/*.cu | head -1)"
done
# nvcc's own options still work
check "$wrap" --version
exit $fail
