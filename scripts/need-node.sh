#!/usr/bin/env bash
# Makes sure node and npm are here, installing Debian's nodejs and npm
# with apt-get when they are missing and this is root; else says what to
# run. $1 says what they are for, in the message.
set -euo pipefail
if command -v npm >/dev/null && command -v node >/dev/null; then
  exit 0
fi
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
  exit 0
fi
echo "node and npm are needed ${1:-here}: sudo apt-get install nodejs npm" >&2
exit 1
