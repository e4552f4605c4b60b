#!/usr/bin/env bash
# Installs what toolserver renders with: Debian's Chromium and a fixed font
# set. The Docker image runs this same script, and so do `make demo`,
# `make test` and CI on the host, so baselines made in one pass in the other.
#
#   docker/install-runtime.sh          install what is missing (needs root)
#   docker/install-runtime.sh --check  only say what is missing
#   EXTRA_PACKAGES="nginx" docker/install-runtime.sh   also install these
set -euo pipefail

packages=(chromium fonts-liberation fonts-dejavu-core fonts-noto-color-emoji ca-certificates)
# CHROMIUM_VERSION pins Chromium's Debian version (the image's build arg).
pin=""
if [ -n "${CHROMIUM_VERSION:-}" ]; then
  pin="=${CHROMIUM_VERSION}"
fi
# shellcheck disable=SC2206
packages+=(${EXTRA_PACKAGES:-})

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

if [ "${1:-}" = "--check" ]; then
  echo "missing: ${missing[*]}" >&2
  exit 1
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "toolserver needs these Debian packages: ${missing[*]}" >&2
  echo "install them with:  sudo apt-get update && sudo apt-get install -y --no-install-recommends ${missing[*]}" >&2
  exit 1
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "no apt-get here: install ${missing[*]} with your package manager, or set CHROMIUM_PATH" >&2
  exit 1
fi

echo "installing ${missing[*]} with apt-get" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
args=()
for p in "${missing[@]}"; do
  if [ "$p" = chromium ] && [ -n "$pin" ]; then
    args+=("chromium$pin" "chromium-common$pin")
  else
    args+=("$p")
  fi
done
apt-get install -y -qq --no-install-recommends "${args[@]}" >/dev/null
