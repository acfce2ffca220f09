#!/usr/bin/env bash
# What a scenario run does at its edges (issue 31, point 6): a scenario that
# cannot be run is refused before anything runs, with the reason, and
# nothing is left behind (the sanitizer build checks for leaks).
# Usage: cli_scenario_runs.sh CORUN_BINARY SOURCE_DIR
source "$(dirname "$0")/expect_common.sh"
export CORUN_PROFILE_PATH=$tmp/profiles.txt

# corun experiment with a folder that lacks its scenario file: an error,
# and the scenario it allocated freed (LeakSanitizer fails the exit code)
mkdir -p "$tmp/empty"
expect 1 "flep-hpf-pairs.json: No such file" -- experiment hpf --dir "$tmp/empty" --quiet

expect_done
