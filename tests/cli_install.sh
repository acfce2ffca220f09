#!/usr/bin/env bash
# cmake --install into a temporary prefix, and what a user does with it:
# (a) a C program built against libcorun through pkg-config runs a launch on
# the simulator; (b) a CMake project finds it with find_package(corun) and
# links corun::corun; (c) the installed corun-cc transforms a .cu file and
# the installed corun-nvcc hands nvcc the prefix's headers and library
# (it builds a program linked to the prefix's libcorun; plain build only),
# with no source or build path in it;
# (d) the installed corun runs a scenario by name from /.
#
# Usage: cli_install.sh CORUN_BINARY SOURCE_DIR
set -uo pipefail
build=$(cd "$(dirname "$1")" && pwd)
src=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
fails=0
pass=0
check() {
  if "$@"; then
    pass=$((pass + 1))
  else
    echo "FAIL: $*"
    fails=$((fails + 1))
  fi
}
# contains FILE WORDS: the file holds WORDS (its head printed if not)
contains() {
  grep -qF -- "$2" "$1" || { echo "--- $1 lacks '$2':"; head -20 "$1"; return 1; }
}

# in_tmp CMD...: runs CMD in $tmp, its output in $tmp/nvcc.out (shown if it fails)
in_tmp() {
  (cd "$tmp" && "$@") > "$tmp/nvcc.out" 2>&1 || { tail -20 "$tmp/nvcc.out"; return 1; }
}

if ! cmake --install "$build" --prefix "$prefix" > "$tmp/install.log" 2>&1; then
  cat "$tmp/install.log"
  echo "FAIL: cmake --install"
  exit 1
fi
for f in bin/corun lib/libcorun.so include/corun/corun.h include/corun/corun_sim.h \
         include/corun/corun_device.cuh lib/pkgconfig/corun.pc lib/cmake/corun/corunConfig.cmake \
         share/corun/scenarios/ls-batch.json; do
  check test -e "$prefix/$f"
done

# A sanitizer build installs an instrumented libcorun: programs built
# against it need the same runtime.
sanflags=()
if grep -q "^CORUN_SANITIZE:BOOL=ON" "$build/CMakeCache.txt" 2> /dev/null; then
  sanflags=(-fsanitize=address,undefined)
fi
export CORUN_PROFILE_PATH=off

# (a) pkg-config: a sim context, one kernel, one launch run to its end
cat > "$tmp/use.c" <<'C'
#include <stdio.h>
#include <string.h>
#include "corun/corun.h"
#include "corun/corun_sim.h"

int main(void)
{
    corun_ctx_opts co = {"sim", "mps"};
    corun_sim_kernel_desc kd;
    corun_ctx *ctx;
    corun_kernel *k;
    corun_job *j;
    corun_progress p;
    char seed[32];

    memset(&kd, 0, sizeof(kd));
    kd.name = "scale";
    kd.task_us = 5;
    if (corun_ctx_create(&co, &ctx) != CORUN_OK || corun_sim_kernel_register(ctx, &kd, &k) != CORUN_OK ||
        corun_launch(ctx, k, (corun_dim3){1000, 1, 1}, (corun_dim3){256, 1, 1}, 0, NULL, NULL,
                     &j) != CORUN_OK ||
        corun_job_wait(j, -1) != CORUN_OK || corun_job_progress(j, &p) != CORUN_OK ||
        corun_setting_get("seed", seed, sizeof(seed)) != CORUN_OK) {
        fprintf(stderr, "%s\n", corun_last_error());
        return 1;
    }
    printf("backend %s, tasks done %llu, seed %s\n", corun_ctx_backend(ctx),
           (unsigned long long)p.done, seed);
    corun_job_release(j);
    corun_ctx_destroy(ctx);
    return 0;
}
C
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
if check pkg-config --exists corun; then
  read -r -a pc <<< "$(pkg-config --cflags --libs corun)"
  check cc -std=c11 "${sanflags[@]}" -o "$tmp/use" "$tmp/use.c" "${pc[@]}" \
    -Wl,-rpath,"$prefix/lib"
  CORUN_SEED=42 "$tmp/use" > "$tmp/use.out" 2>&1
  check contains "$tmp/use.out" "backend sim, tasks done 1000, seed 42"
  check test "$(pkg-config --variable=includedir corun)" -ef "$prefix/include"
fi

# (b) find_package(corun): configure, build and run a project linking corun::corun
mkdir -p "$tmp/proj"
cp "$tmp/use.c" "$tmp/proj/use.c"
cat > "$tmp/proj/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.20)
project(use_corun LANGUAGES C)
find_package(corun 0.1 REQUIRED)
add_executable(use use.c)
target_link_libraries(use PRIVATE corun::corun)
CM
if check cmake -S "$tmp/proj" -B "$tmp/proj/build" -DCMAKE_PREFIX_PATH="$prefix" \
     -DCMAKE_C_FLAGS="${sanflags[*]}" > "$tmp/proj.log" 2>&1 &&
   check cmake --build "$tmp/proj/build" >> "$tmp/proj.log" 2>&1; then
  CORUN_SEED=7 "$tmp/proj/build/use" > "$tmp/proj.out" 2>&1
  check contains "$tmp/proj.out" "tasks done 1000, seed 7"
else
  tail -20 "$tmp/proj.log"
fi

# (c) the installed transformer
cat > "$tmp/k.cu" <<'K'
__global__ void scale(int *p, int s) { p[blockIdx.x * blockDim.x + threadIdx.x] *= s; }
void run(int *p) { scale<<<4, 64>>>(p, 3); }
K
if [ -x "$prefix/bin/corun-cc" ]; then
  export CORUN_CACHE=$tmp/cache
  check "$prefix/bin/corun-cc" --no-pch "$tmp/k.cu" -o "$tmp/k.out.cu"
  check contains "$tmp/k.out.cu" "scale__corun"
  check test -x "$prefix/bin/corun-nvcc"
  # nothing of the source or build tree baked in
  check bash -c "! grep -qF -e '$src' -e '$build' '$prefix/bin/corun-nvcc'"
  nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
  if [ ${#sanflags[@]} -gt 0 ]; then
    # corun-nvcc links programs and precompiles headers (two threads, which
    # an ASan corun-cc does not always survive): the plain build checks it
    echo "sanitizer build: corun-nvcc left to the plain build"
  elif [ -x "$nvcc" ]; then
    cat > "$tmp/main.cpp" <<'M'
void run(int *p);
int main() { run(nullptr); return 0; }
M
    export CORUN_NVCC_PIN=0 NVCC_REAL=$nvcc
    check in_tmp "$prefix/bin/corun-nvcc" -arch=sm_90 -dryrun -c k.cu
    check test "$(ls "$CORUN_CACHE"/*.cu 2> /dev/null | wc -l)" -eq 1
    check contains "$tmp/nvcc.out" "$CORUN_CACHE/"
    check contains "$tmp/nvcc.out" "$prefix/bin/../include"
    # a real build, linked against the prefix's libcorun (not run: no GPU)
    check in_tmp "$prefix/bin/corun-nvcc" -arch=sm_90 k.cu main.cpp -o k
    ldd "$tmp/k" > "$tmp/ldd.out" 2>&1
    check contains "$tmp/ldd.out" "libcorun.so.0 => $prefix/bin/../lib/libcorun.so.0"
  else
    echo "no nvcc at $nvcc: corun-nvcc not run"
  fi
else
  echo "no corun-cc installed (built without libclang): transformer not checked"
fi

# (d) the installed corun finds its scenarios from anywhere
(cd / && "$prefix/bin/corun" --log-level info sim --scenario ls-batch --policy mps \
   --duration-ms 20 --quiet > "$tmp/sim.out" 2>&1)
check contains "$tmp/sim.out" "scenario ls-batch, policy mps"
check contains "$tmp/sim.out" "is $prefix/bin/../share/corun/scenarios/ls-batch.json"

echo "$pass passed, $fails failed"
[ "$fails" -eq 0 ]
