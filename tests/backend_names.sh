#!/usr/bin/env bash
# tests/backend_names.sh SRCDIR: backends are told apart by capability, not
# by name. Fails where a string comparison outside the factory
# (src/backends/create.c) involves a backend's name: a literal "sim", "cuda"
# or "auto", the names' macros, ops->name, or the backend setting. Comparing
# two stored keys (the profile store's backend field) is not choosing by name;
# src/cc/ (the source transformer) knows no backends, only CUDA's API names.
set -uo pipefail
src=${1:?usage: backend_names.sh SRCDIR}
cd "$src" || exit 1

names='"(sim|cuda|auto)"|CORUN_(SIM|CUDA)_NAME|ops->name|settings\.backend|set\.backend|opts->backend'
hits=$(grep -rnE '\b(str(n|case|ncase)?cmp|memcmp)\b' src include |
         grep -vE '^src/(backends/create\.c|cc/)' | grep -E "$names")
if [ -n "$hits" ]; then
  echo "backend_names: a backend told apart by name (ask for a capability, or the factory):" >&2
  echo "$hits" >&2
  exit 1
fi
# the check finds what it looks for
probe='    if (strcmp(cli->settings.backend, "auto") == 0) {'
if ! printf '%s\n' "$probe" | grep -qE "$names"; then
  echo "backend_names: the pattern misses a known comparison" >&2
  exit 1
fi
echo "backend_names: no comparison with a backend's name outside src/backends/create.c"
