#!/usr/bin/env bash
# Make a Docker engine answer: install docker.io (Debian, as root) and start dockerd when none does.
set -euo pipefail
if docker info >/dev/null 2>&1; then exit 0; fi
if ! command -v dockerd >/dev/null 2>&1; then
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "ensure_docker: no Docker engine and cannot install one (need root on Debian)." >&2
    exit 1
  fi
  echo "ensure_docker: installing docker.io" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io >/dev/null
fi
if [ -f /var/run/docker.pid ] && ! kill -0 "$(cat /var/run/docker.pid)" 2>/dev/null; then
  rm -f /var/run/docker.pid   # left behind by a killed dockerd
fi
if ! pgrep -x dockerd >/dev/null 2>&1; then
  echo "ensure_docker: starting dockerd (log: /var/log/rsr-dockerd.log)" >&2
  # A session of its own: a signal to the process group of whatever started it (a stopped make, a test run)
  # must not take the engine down.
  setsid -f dockerd </dev/null >/var/log/rsr-dockerd.log 2>&1
fi
for _ in $(seq 1 60); do
  if docker info >/dev/null 2>&1; then exit 0; fi
  sleep 1
done
echo "ensure_docker: dockerd did not answer within 60 s; see /var/log/rsr-dockerd.log" >&2
exit 1
