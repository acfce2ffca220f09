# shellcheck shell=bash
# gpu-build.sh — sourced by the scripts that run programs on a GPU
# (gpu-apps.sh, cc-projects.sh) from the repository root.
#
# gpu_build DIR LOG: libcorun and, where libclang is, corun-cc and
# corun-nvcc in DIR (a Release build with CUDA, no tests), configured once
# and always brought up to date (a stale corun-cc or corun-nvcc would
# transform and pin with yesterday's rules; up to date, the build is a
# no-op), the output into DIR/LOG, dependencies fetched by
# scripts/fetch-deps.sh (.deps/) found first. Returns 1 after saying why.
gpu_build() {
  local dir=$1 log=$1/$2
  if [ -d .deps/root/usr ]; then
    export CMAKE_PREFIX_PATH=$PWD/.deps/root/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}
  fi
  mkdir -p "$dir"
  if [ ! -f "$dir/CMakeCache.txt" ]; then
    cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DCORUN_CUDA=ON -DCORUN_TESTS=OFF \
      -DCORUN_WERROR=OFF > "$log" 2>&1 || {
      echo "configuring $dir failed (see $log)"
      return 1
    }
  fi
  cmake --build "$dir" -j "$(nproc)" >> "$log" 2>&1 || {
    echo "build of libcorun failed (see $log)"
    return 1
  }
}
