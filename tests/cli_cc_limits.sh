#!/usr/bin/env bash
# corun-cc on input that clang alone does not survive (docs/corun-cc.md,
# "Where libclang runs", "What a parse may read"): a 100,000-term
# expression is transformed; code nested deeper than the parse stack, and a
# crash inside libclang, end in one line and exit 1 with nothing written;
# includes that are not regular files (/dev/zero, a FIFO, a directory) and
# one past the read limit are refused unread, naming the include; so are
# such inputs.
#
# Usage: cli_cc_limits.sh CORUN_BINARY SOURCE_DIR
# shellcheck source=tests/cc_common.sh
. "$(dirname "${BASH_SOURCE[0]}")/cc_common.sh"
cd "$tmp" || exit 1
sanitized=0
grep -q "^CORUN_SANITIZE:BOOL=ON" "$build/CMakeCache.txt" 2> /dev/null && sanitized=1
# refused NAME RC PATTERN: the last run exited RC, said PATTERN, wrote nothing
refused() {
  check test "$2" = 1
  check grep -q -- "$3" "$1.log"
  check test ! -e "$1.out.cu"
  check test "$(wc -l < "$1.log")" -le 2
}
kernel='__global__ void k(int *p) { p[0] = 1; }'
# limited CMD...: CMD under a memory limit and a time limit, so that a
# regression reading /dev/zero cannot take the machine down (ASan needs its
# address space: its own RSS limit instead)
limited() {
  if [ $sanitized = 1 ]; then
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}hard_rss_limit_mb=3072" timeout 60 "$@"
  else
    (ulimit -v 4194304 && exec timeout 60 "$@")
  fi
}

# 100,000 terms: clang recurses once per term (~30 MiB of stack)
{
  echo '__global__ void deep(float *a, float x) {'
  printf '    a[threadIdx.x] = x'
  yes ' + x' | head -n 99999 | tr -d '\n'
  echo ';'
  echo '}'
  echo 'void run(float *a) { deep<<<1, 32>>>(a, 1.0f); }'
} > deep.cu
limited "$cc" deep.cu -o deep.out.cu 2> deep.log
check test $? = 0
check test ! -s deep.log
sed -n 2p deep.cu > deep.line
check grep -qxF -f deep.line deep.out.cu
check grep -q "deep__corun_launch(::corun::config(1, 32), a, 1.0f)" deep.out.cu

# the same on a stack too small for it: refused in one line
limited "$cc" --parse-stack 16M deep.cu -o small.out.cu 2> small.log
refused small $? "corun-cc: deep.cu: refused: .*nested too deeply for the parser (stack overflow"

# a crash inside libclang (a SIGSEGV sent to the device side's parse
# thread): one line, exit 1, no core. The signal goes once the thread has
# run 50 ms (it is then inside libclang: what it does before takes
# microseconds, and a busy machine may stop it there). A run that ends
# before the signal can be sent is tried again.
for try in 1 2 3; do
  rm -f crash.out.cu
  "$cc" --no-pch deep.cu -o crash.out.cu 2> crash.log &
  pid=$!
  tid=
  for _ in $(seq 500); do
    for t in /proc/$pid/task/*; do
      [ "$(cat "$t/comm" 2> /dev/null)" = cc-device-parse ] && tid=${t##*/}
    done
    # utime + stime of the thread, in clock ticks (fields 14 and 15)
    [ -n "$tid" ] && [ "$(sed 's/.*) //' "/proc/$pid/task/$tid/stat" 2> /dev/null |
      awk '{ print $12 + $13 }')" -ge $(($(getconf CLK_TCK) / 20)) ] 2> /dev/null && break
    kill -0 $pid 2> /dev/null || break
    sleep 0.01
  done
  sent=0
  [ -n "$tid" ] && kill -SEGV "$tid" 2> /dev/null && sent=1
  wait $pid
  rc=$?
  [ $sent = 1 ] && break
done
check test $sent = 1
refused crash $rc "corun-cc: libclang crashed while parsing deep.cu (signal 11)"

# /dev/zero: refused before a byte is read
printf '#include "/dev/zero"\n%s\n' "$kernel" > zero.cu
start=$(date +%s)
limited "$cc" zero.cu -o zero.out.cu 2> zero.log
refused zero $? "zero.cu:1:10: error: corun-cc: include: '/dev/zero' is a character device, not a regular file: refused without reading it"
check test $(($(date +%s) - start)) -le 20

# a FIFO nobody writes to, two includes deep: refused, no wait
mkfifo fifo.h
printf '#include "fifo.h"\n' > outer.h
printf '#include "outer.h"\n%s\n' "$kernel" > fifo.cu
limited "$cc" fifo.cu -o fifo.out.cu 2> fifo.log
refused fifo $? "outer.h:1:10: error: corun-cc: include: '.*fifo.h' is a FIFO, not a regular file: refused without reading it"

# a directory: said as such, not "file not found"
mkdir dir.h
printf '#include "dir.h"\n%s\n' "$kernel" > dir.cu
limited "$cc" dir.cu -o dir.out.cu 2> dir.log
refused dir $? "dir.cu:1:10: error: corun-cc: include: '.*dir.h' is a directory, not a file"

# past the read limit (256 MiB; the file is sparse): refused unread
truncate -s 300M huge.h
printf '#include "huge.h"\n%s\n' "$kernel" > huge.cu
limited "$cc" huge.cu -o huge.out.cu 2> huge.log
refused huge $? "huge.cu:1:10: error: corun-cc: include: '.*huge.h' (300.0 MiB) would take the translation unit past its read limit of 256.0 MiB"
# a lower limit refuses a smaller one, and lets through what fits (the CUDA
# headers take ~16 MiB, precompiled or not)
truncate -s 40M large.h
printf '#include "large.h"\n%s\n' "$kernel" > large.cu
limited "$cc" --read-limit 32M large.cu -o large.out.cu 2> large.log
refused large $? "include: '.*large.h' (40.0 MiB) would take the translation unit past its read limit of 32.0 MiB"
head -c 3000000 /dev/zero | tr '\0' '\n' > lines.h
printf '#include "lines.h"\n%s\n' "$kernel" > lines.cu
limited "$cc" --read-limit 32M lines.cu -o lines.out.cu 2> lines.log
check test $? = 0
check test ! -s lines.log

# such inputs themselves
limited "$cc" /dev/zero -o in.out.cu 2> in.log
refused in $? "/dev/zero: error: corun-cc: input: a character device, not a regular file"
limited "$cc" fifo.h -o in.out.cu 2> in.log
refused in $? "fifo.h: error: corun-cc: input: a FIFO, not a regular file"
limited "$cc" --read-limit 1M lines.h -o in.out.cu 2> in.log
refused in $? "lines.h: error: corun-cc: input: more than the read limit of 1.0 MiB"

# the options
for bad in "--read-limit x" "--read-limit -1" "--read-limit 5T" "--parse-stack 1K" \
  "--parse-stack 65G"; do
  # shellcheck disable=SC2086
  "$cc" $bad zero.cu -o opt.out.cu 2> opt.log
  check test $? = 2
  check grep -q "not a size" opt.log
done
"$cc" --help | grep -q -- "--read-limit SIZE" || { echo "FAIL: --help lacks --read-limit"; fail=1; }
"$cc" --help | grep -q -- "--parse-stack SIZE" || { echo "FAIL: --help lacks --parse-stack"; fail=1; }

[ $fail = 0 ] && echo "ok: corun-cc's limits"
exit $fail
