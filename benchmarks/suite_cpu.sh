#!/usr/bin/env bash
# The test suite's wall time beside the CPU it kept busy: both cores' busy and idle time from /proc/stat,
# read before and after the command (Linux only; other work on the machine counts too, so run it quiet).
#
#   benchmarks/suite_cpu.sh LOG .venv/bin/pytest -q -n 3 --dist loadscope --no-loadscope-reorder --durations=0
#
# Writes the command's output to LOG and appends "rc=... wall_s=... busy_s=... idle_s=... engine_s=..." to it;
# engine_s is the CPU of dockerd and containerd with the helpers they ran and waited for (/proc/PID/stat).
set -uo pipefail
engine_ticks() {
  local total=0 pid f
  for pid in $(pgrep -x dockerd) $(pgrep -x containerd); do
    read -r -a f <"/proc/$pid/stat" || continue
    total=$((total + f[13] + f[14] + f[15] + f[16]))
  done
  echo $total
}
log=$1
shift
ticks=$(getconf CLK_TCK)
read -r _ u n s i w q sq st _ </proc/stat
e0=$(engine_ticks)
t0=$(date +%s%N)
"$@" >"$log" 2>&1
rc=$?
read -r _ u2 n2 s2 i2 w2 q2 sq2 st2 _ </proc/stat
t1=$(date +%s%N)
e1=$(engine_ticks)
busy=$(((u2 + n2 + s2 + q2 + sq2 + st2) - (u + n + s + q + sq + st)))
idle=$(((i2 + w2) - (i + w)))
printf 'rc=%d wall_s=%d busy_s=%d idle_s=%d engine_s=%d\n' $rc $(((t1 - t0) / 1000000000)) $((busy / ticks)) \
  $((idle / ticks)) $(((e1 - e0) / ticks)) | tee -a "$log"
exit $rc
