#!/usr/bin/env bash
# Fetches the Debian packages corun builds against (jansson, cmocka) and
# unpacks them into .deps/root, for machines that cannot install packages
# themselves (the GPU machines used by `make gpu-check` have no network).
# Run it on a Debian 12 x86-64 machine with network; the folder is ignored by
# git and can be copied along. scripts/gpu-check.sh uses it when present.
set -euo pipefail
cd "$(dirname "$0")/.."
pkgs=(libjansson4 libjansson-dev libcmocka0 libcmocka-dev)
rm -rf .deps
mkdir -p .deps/debs .deps/root
(cd .deps/debs && apt-get download "${pkgs[@]}" 2>/dev/null)
for d in .deps/debs/*.deb; do
  dpkg -x "$d" .deps/root
done
echo "fetched ${pkgs[*]} into .deps/root"
