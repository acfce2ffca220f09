#!/usr/bin/env bash
# Build-time check that every corun kernel in the repository keeps its
# occupancy in worker form: compiles the kernels for sm_90 with ptxas's
# resource report and compares blocks per SM of NAME and NAME__corun (and
# NAME__corun_ahead, where a CORUN_SHARED kernel has one), at the block size
# each is launched with, using `corun occupancy` (CUDA's rules).
# Usage: cli_occupancy_pins.sh CORUN_BINARY SOURCE_DIR
set -euo pipefail
corun=$1
src=$2
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
if [ ! -x "$nvcc" ]; then
  echo "no nvcc at $nvcc: skipped"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# file : kernel=threads per block ...
checks=(
  "gpu/check/check.cu:vadd=256 matmul=1024 stencil3d=256 reduce=256 blackscholes=128 transpose=256 ragged=256 longtask=256 spin=256"
  "src/backends/cuda/kernels/synth.cu:corun_synth=128 corun_synth=256 corun_synth=1024"
)

# blocks per SM of THREADS-thread blocks using REGS registers and SMEM bytes
blocks_per_sm() {
  "$corun" occupancy --threads "$1" --regs "$2" --smem "$3" | awk '/^blocks_per_sm/ {print $2}'
}

fail=0
for entry in "${checks[@]}"; do
  file=${entry%%:*}
  "$nvcc" -std=c++17 -arch=sm_90 -O3 -I"$src/include" -I"$src/src" -I"$src/gpu/check" -c "$src/$file" \
    -o "$tmp/k.o" --resource-usage 2> "$tmp/usage.txt"
  # lines: "Compiling entry function 'NAME' for 'sm_90'" then "Used R registers, ..., S bytes smem"
  : > "$tmp/res.txt"
  name=""
  while IFS= read -r line; do
    if [[ $line =~ Compiling\ entry\ function\ \'([A-Za-z0-9_]+)\' ]]; then
      name=${BASH_REMATCH[1]}
    elif [[ $line =~ Used\ ([0-9]+)\ registers ]]; then
      regs=${BASH_REMATCH[1]}
      smem=0
      if [[ $line =~ ([0-9]+)\ bytes\ smem ]]; then
        smem=${BASH_REMATCH[1]}
      fi
      echo "$name $regs $smem" >> "$tmp/res.txt"
    fi
  done < "$tmp/usage.txt"
  for kt in ${entry#*:}; do
    k=${kt%%=*}
    t=${kt#*=}
    read -r _ rp sp < <(grep -E "^$k " "$tmp/res.txt" || true)
    read -r _ rw sw < <(grep -E "^${k}__corun " "$tmp/res.txt" || true)
    if [ -z "${rp:-}" ] || [ -z "${rw:-}" ]; then
      echo "FAIL $file: $k or ${k}__corun not found in the ptxas report"
      fail=1
      continue
    fi
    op=$(blocks_per_sm "$t" "$rp" "$sp")
    ow=$(blocks_per_sm "$t" "$rw" "$sw")
    if [ "$op" != "$ow" ]; then
      echo "FAIL $k ($t threads): plain $rp regs/$sp B smem -> $op blocks/SM; worker $rw regs/$sw B -> $ow"
      fail=1
    else
      echo "ok   $k ($t threads): $op blocks/SM (plain $rp regs, worker $rw regs)"
    fi
    read -r _ ra sa < <(grep -E "^${k}__corun_ahead " "$tmp/res.txt") || true
    if [ -n "${ra:-}" ]; then
      oa=$(blocks_per_sm "$t" "$ra" "$sa")
      if [ "$op" != "$oa" ]; then
        echo "FAIL ${k}__corun_ahead ($t threads): $ra regs/$sa B -> $oa blocks/SM, plain $op"
        fail=1
      else
        echo "ok   ${k}__corun_ahead ($t threads): $oa blocks/SM ($ra regs)"
      fi
    fi
    unset rp rw sp sw ra sa
  done
done
exit $fail
