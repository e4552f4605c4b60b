#!/usr/bin/env bash
# Installs what toolserver renders with: Debian's Chromium, as its headless
# shell (chromium-headless-shell: the same Chromium without the browser's
# windows, which toolserver looks for first), and a fixed font set. The Docker image runs this same script, and so do `make demo`,
# `make test` and CI on the host, so baselines made in one pass in the other.
#
#   docker/install-runtime.sh          install what is missing (needs root)
#   docker/install-runtime.sh --check  only say what is missing
#   EXTRA_PACKAGES="nginx" docker/install-runtime.sh   also install these
set -euo pipefail

packages=(chromium-headless-shell fonts-liberation fonts-dejavu-core fonts-noto-color-emoji ca-certificates)
# Versions that must match wherever baselines are made, so that the host and
# the image render the same pixels. The fonts are bookworm's own (a stable
# release keeps them); CHROMIUM_VERSION pins Chromium's Debian version (the
# image's build arg; empty takes the version of the day).
declare -A pins=(
  [fonts-liberation]=1:1.07.4-11
  [fonts-dejavu-core]=2.37-6
  [fonts-noto-color-emoji]=2.042-0+deb12u1
)
if [ -n "${CHROMIUM_VERSION:-}" ]; then
  pins[chromium-headless-shell]=$CHROMIUM_VERSION
fi
# shellcheck disable=SC2206
packages+=(${EXTRA_PACKAGES:-})

# A package is missing when it is not installed, or installed at another
# version than its pin.
missing=()
for p in "${packages[@]}"; do
  have=$(dpkg-query -W -f='${Status} ${Version}' "$p" 2>/dev/null || true)
  case "$have" in
    "install ok installed "*) ;;
    *) missing+=("$p"); continue ;;
  esac
  if [ -n "${pins[$p]:-}" ] && [ "${have#install ok installed }" != "${pins[$p]}" ]; then
    echo "$p is at ${have#install ok installed }, pinned at ${pins[$p]}" >&2
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

# What to ask apt for: name=version where pinned.
args=()
for p in "${missing[@]}"; do
  if [ -z "${pins[$p]:-}" ]; then
    args+=("$p")
  elif [ "$p" = chromium-headless-shell ]; then
    args+=("chromium-headless-shell=${pins[$p]}" "chromium-common=${pins[$p]}")
  else
    args+=("$p=${pins[$p]}")
  fi
done

if [ "${1:-}" = "--check" ]; then
  echo "missing: ${args[*]}" >&2
  exit 1
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "toolserver needs these Debian packages: ${args[*]}" >&2
  echo "install them with:  sudo apt-get update && sudo apt-get install -y --no-install-recommends --allow-downgrades ${args[*]}" >&2
  exit 1
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "no apt-get here: install ${args[*]} with your package manager, or set CHROMIUM_PATH" >&2
  exit 1
fi

echo "installing ${args[*]} with apt-get" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends --allow-downgrades "${args[@]}" >/dev/null
