# shellcheck shell=bash
# gpu-build.sh — sourced by the scripts that run programs on a GPU
# (gpu-check.sh, gpu-apps.sh, cc-projects.sh) from the repository root:
# gpu_build builds, gpu_label names the tree results come from.
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

# gpu_label: what results are labelled with, on stdout. CORUN_COMMIT where
# set; else the short commit of HEAD, and where the files differ from it
# "+changes" and the tree they make (tracked files and untracked ones git
# does not ignore, written through a throwaway index): a copied working
# tree whose git metadata lags (as the device tool's does) names no commit
# it does not hold, and `git log --all --format='%h %T' | grep TREE` where
# the commits are finds the commit of that tree. "unknown" outside git.
gpu_label() {
  if [ -n "${CORUN_COMMIT:-}" ]; then
    echo "$CORUN_COMMIT"
    return
  fi
  local head idx tree
  head=$(git rev-parse --short HEAD 2> /dev/null) || { echo unknown; return; }
  idx=$(mktemp) || { echo "$head+changes"; return; }
  tree=$(GIT_INDEX_FILE=$idx git read-tree HEAD 2> /dev/null &&
    GIT_INDEX_FILE=$idx git add -A . 2> /dev/null &&
    GIT_INDEX_FILE=$idx git write-tree 2> /dev/null)
  rm -f "$idx"
  if [ -n "$tree" ] && [ "$tree" = "$(git rev-parse 'HEAD^{tree}' 2> /dev/null)" ]; then
    echo "$head"
  else
    echo "$head+changes${tree:+ (tree ${tree:0:12})}"
  fi
}
