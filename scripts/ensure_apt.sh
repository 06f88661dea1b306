#!/usr/bin/env bash
# Install Debian packages the tests need when their command is missing: ensure_apt.sh CMD PACKAGE...
set -euo pipefail
cmd=$1; shift
if command -v "$cmd" >/dev/null 2>&1; then exit 0; fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure_apt: $cmd is missing and cannot be installed here (need root on Debian): $*" >&2
  exit 1
fi
echo "ensure_apt: installing $*" >&2
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
