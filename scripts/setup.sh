#!/usr/bin/env bash
# Installs the Debian packages corun's build and tests need. Idempotent: when
# everything is present it only asks dpkg and returns in well under a second.
set -euo pipefail

packages=(
  build-essential
  cmake
  pkg-config
  libcmocka-dev     # unit tests
  libjansson-dev    # scenario files (JSON)
  libclang-19-dev   # corun-cc: source-to-source transformation
  clang             # fuzz targets: libFuzzer, ASan, UBSan (scripts/fuzz.sh)
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "setup: installing ${missing[*]}" >&2
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    sudo="sudo"
  else
    echo "setup: need root (or sudo) to install: ${missing[*]}" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
