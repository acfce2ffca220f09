#!/usr/bin/env bash
# tests/setting_reads.sh SRCDIR: every setting in the table. Fails where a
# CORUN_* variable is read other than through the settings table
# (src/core/settings.h): a getenv("CORUN_...") in src/, include/ or gpu/
# outside src/core/settings.c, or a $CORUN_... expansion in a script of src/
# (corun-nvcc gets its settings from `corun-cc --setting NAME`).
set -uo pipefail
src=${1:?usage: setting_reads.sh SRCDIR}
cd "$src" || exit 1

c_reads='getenv *\( *"CORUN_'
sh_reads='\$\{?CORUN_'
hits=$( { grep -rnE "$c_reads" src include gpu | grep -v '^src/core/settings\.c:';
          grep -rnE "$sh_reads" --include='*.in' --include='*.sh' src | grep -vE '^[^:]+:[0-9]+: *#'; } )
if [ -n "$hits" ]; then
  echo "setting_reads: a CORUN_* variable read outside the settings table:" >&2
  echo "$hits" >&2
  exit 1
fi
# the checks find what they look for
if ! printf '%s\n' '    const char *old = getenv("CORUN_PLAIN_BELOW_US");' | grep -qE "$c_reads" ||
   ! printf '%s\n' 'pin=${CORUN_NVCC_PIN:-1}' | grep -qE "$sh_reads"; then
  echo "setting_reads: a pattern misses a known read" >&2
  exit 1
fi
echo "setting_reads: every CORUN_* variable is read through the settings table"
