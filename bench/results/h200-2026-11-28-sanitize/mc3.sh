#!/usr/bin/env bash
# memcheck sanitize loop at HEAD with the watchdog + thread backtraces on a stall
O=$OUT; DL=${DL:-400}; S=$SECONDS; MAXH=${MAXH:-2}
export CMAKE_PREFIX_PATH=$PWD/.deps/root/usr PATH=/usr/local/cuda/bin:$PATH
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCORUN_CUDA=ON -DCORUN_TESTS=OFF -DCORUN_WERROR=OFF > $O/cm.log 2>&1 && cmake --build build-gpu -j16 --target corun-gpucheck >> $O/cm.log 2>&1; echo "build rc=$? $((SECONDS-S))s"
BIN=$PWD/build-gpu/gpu/check/corun-gpucheck
i=0; h=0
while [ $((SECONDS-S)) -lt $DL ] && [ $h -lt $MAXH ]; do i=$((i+1))
  SANITIZE_STALL_S=8 CORUN_AHEAD=2 timeout 40 compute-sanitizer --tool memcheck --report-api-errors no --error-exitcode 3 $BIN sanitize > $O/mc.log 2>&1
  rc=$?; echo "run $i rc=$rc" >> $O/mc.txt
  if [ $rc != 0 ]; then h=$((h+1))
    grep -v "^=====" $O/mc.log | awk -v B=$BIN '{ if (match($0, /corun-gpucheck\(\+0x[0-9a-f]+\)/)) { a=substr($0, RSTART+16, RLENGTH-17); cmd="addr2line -f -C -e " B " " a " | head -1"; cmd | getline f; close(cmd); print $0 "  <" f ">" } else print }' > $O/mc-fail-$i.log
  fi
done
echo "$(grep -c "rc=0" $O/mc.txt) ok of $i runs"; grep -v "rc=0" $O/mc.txt
rm -f $O/mc.log
