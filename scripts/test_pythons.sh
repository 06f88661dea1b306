#!/usr/bin/env bash
# The tests on the other supported Pythons (make test runs this after the main suite on the default one):
#   3.12:lowest  the lowest declared version of every direct dependency (uv --resolution lowest-direct), so the
#                lower bounds in pyproject.toml are versions this run proves (checked: each one installed exactly);
#   3.13:locked  constraints.txt, the lock the default venv uses.
# On each: the suite minus SKIP_MARKERS, then tests/test_package.py (the wheel in a fresh venv, with the versions
# this leg tested). Indirect dependencies resolve as of the lock's date (its `# exclude-newer:` line), so a new
# release elsewhere cannot change what a fresh clone tests; nothing is compiled from source.
# The venvs are cached in .cache/pythons/ and rebuilt when pyproject.toml, constraints.txt, the interpreter or
# the recipe below changes; they are set up one after another, then the legs' tests run side by side (each
# leg's output is shown when it ends; RSR_PYTHONS_PARALLEL=0 runs them one after another). Every step says how
# long it took. A missing interpreter is a failure, not a skip.
#
# Usage: scripts/test_pythons.sh [LEG...]      e.g. scripts/test_pythons.sh 3.13:locked
#        scripts/test_pythons.sh --check       only find the interpreters (make test does this first)
set -euo pipefail
cd "$(dirname "$0")/.."

ALL_LEGS=(3.12:lowest 3.13:locked)
# Left to the main run: Docker sandboxes and the real browser (engines outside Python), the checks of our files
# with other tools' own models (they run in side venvs of their own, whatever Python runs the suite), and the
# wheel test, which each leg runs on its own after its suite.
SKIP_MARKERS=(docker browser formats package)
UV=${UV:-.venv/bin/uv}
LOCK=constraints.txt
CACHE=.cache/pythons
PARALLEL=${RSR_PYTHONS_PARALLEL:-1}
export UV_PYTHON_DOWNLOADS=never # only the interpreters we name; never a download

check_only=false
if [ "${1:-}" = --check ]; then
  check_only=true
  shift
fi
LEGS=("$@")
[ ${#LEGS[@]} -gt 0 ] || LEGS=("${ALL_LEGS[@]}")

say() { echo "test_pythons: $*"; }

# timed LABEL CMD...: run CMD and say how long it took; CMD's status is returned.
timed() {
  local label=$1 t0 ds rc=0
  shift
  t0=$(date +%s%N)
  "$@" || rc=$?
  ds=$((($(date +%s%N) - t0) / 100000000))
  if [ $rc = 0 ]; then
    printf 'test_pythons: %-52s %4d.%d s\n' "$label" $((ds / 10)) $((ds % 10))
  else
    printf 'test_pythons: %-52s FAILED (exit %d) after %d.%d s\n' "$label" $rc $((ds / 10)) $((ds % 10))
  fi
  return $rc
}

# find_python X.Y: the newest pyenv X.Y.*, else pythonX.Y on PATH.
find_python() {
  local v=$1 root p
  root=${PYENV_ROOT:-$(pyenv root 2>/dev/null || echo "${HOME:-/root}/.pyenv")}
  p=$(find "$root/versions" -maxdepth 3 -path "*/versions/$v.*/bin/python$v" 2>/dev/null | sort -V | tail -n1)
  [ -n "$p" ] || p=$(command -v "python$v" || true)
  if [ -z "$p" ]; then
    echo "test_pythons: Python $v not found (looked in $root/versions/$v.*/ and for python$v on PATH);" \
      "install it (pyenv install $v)" >&2
    return 1
  fi
  echo "$p"
}

# build_venv DIR PYTHON RESOLUTION CUTOFF: a fresh venv with the checkout (editable) and its dev extras.
build_venv() {
  local dir=$1 py=$2 resolution=$3 cutoff=$4 how
  case $resolution in
    lowest) how=(--resolution lowest-direct) ;;
    locked) how=(-c "$LOCK") ;;
    *) echo "test_pythons: unknown resolution $resolution" >&2 && return 1 ;;
  esac
  rm -rf "$dir" &&
    "$UV" venv -q --seed --python "$py" "$dir" &&
    "$UV" pip install -q --compile-bytecode --python "$dir/bin/python" --exclude-newer "$cutoff" --only-binary :all: \
      "${how[@]}" -e '.[dev]' &&
    "$UV" pip freeze -q --python "$dir/bin/python" --exclude-editable >"$dir/freeze.txt"
}

# check_lowest PYTHON: every direct dependency is installed at exactly its declared lower bound.
check_lowest() {
  "$1" - <<'EOF'
import sys
import tomllib
from importlib.metadata import version

from packaging.requirements import Requirement
from packaging.version import Version

project = tomllib.load(open("pyproject.toml", "rb"))["project"]
wrong = []
for text in project["dependencies"] + project["optional-dependencies"]["dev"]:  # what build_venv installs
    req = Requirement(text)
    low = next((s.version for s in req.specifier if s.operator == ">="), None)
    got = version(req.name)
    if low is None or Version(got) != Version(low):
        wrong.append(f"{req.name}: declared {req.specifier or 'no bound'}, lowest resolution installed {got}")
if wrong:
    print("test_pythons: the lowest resolution does not install the declared lower bounds (raise them):",
          *wrong, sep="\n  ", file=sys.stderr)
    sys.exit(1)
EOF
}

# test_leg LEG DIR: the suite, then the wheel, on that leg's venv (both run; fails when either failed).
test_leg() {
  local leg=$1 dir=$2 rc=0
  timed "$leg: pytest -m '$markers'" "$dir/bin/python" -m pytest -q -p no:cacheprovider -m "$markers" || rc=1
  timed "$leg: wheel in a fresh venv" env RSR_PACKAGE_CONSTRAINTS="$PWD/$dir/freeze.txt" \
    "$dir/bin/python" -m pytest -q -p no:cacheprovider -m package tests/test_package.py || rc=1
  return $rc
}

if $check_only; then
  for leg in "${LEGS[@]}"; do
    py=$(find_python "${leg%%:*}")
    say "$leg: $py ($("$py" -V))"
  done
  exit 0
fi
[ -x "$UV" ] || { echo "test_pythons: $UV is missing: run make venv first" >&2 && exit 1; }
cutoff=$(sed -n 's/^# exclude-newer: \([^ ]*\).*/\1/p' "$LOCK")
[ -n "$cutoff" ] || { echo "test_pythons: $LOCK has no '# exclude-newer:' line: run make lock" >&2 && exit 1; }
markers=$(printf ' and not %s' "${SKIP_MARKERS[@]}")
markers=${markers# and }
mkdir -p "$CACHE"

# 1. The venvs, one after another (their editable builds share the checkout).
dirs=()
for leg in "${LEGS[@]}"; do
  version=${leg%%:*}
  resolution=${leg#*:}
  py=$(find_python "$version")
  dir=$CACHE/py$version-$resolution
  dirs+=("$dir")
  key=$({
    declare -f build_venv
    echo "$leg $cutoff"
    "$py" -VV
    cat pyproject.toml
    [ "$resolution" = lowest ] || cat "$LOCK"
    cat setup.py rsr_core/*/_*.[ch]
    # the in-place C builds of this interpreter, which a clean of ignored files removes
    ls rsr_core/*/_*"$("$py" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')" 2>/dev/null || true
  } | sha256sum | cut -c1-32)
  if [ "$(cat "$dir/.key" 2>/dev/null)" = "$key" ] && [ -x "$dir/bin/python" ]; then
    say "$leg: cached venv $dir ($("$dir/bin/python" -V))"
  else
    timed "$leg: venv ($("$py" -V))" build_venv "$dir" "$py" "$resolution" "$cutoff"
    echo "$key" >"$dir/.key"
  fi
  [ "$resolution" != lowest ] || timed "$leg: declared lower bounds installed" check_lowest "$dir/bin/python"
done

# 2. The tests of every leg.
failed=()
if [ "$PARALLEL" = 1 ] && [ ${#LEGS[@]} -gt 1 ]; then
  pids=()
  set -m # each leg in a process group of its own, so an interrupted run stops them all
  trap 'for p in "${pids[@]}"; do kill -TERM -- "-$p" 2>/dev/null || true; done' EXIT
  for i in "${!LEGS[@]}"; do
    test_leg "${LEGS[i]}" "${dirs[i]}" >"${dirs[i]}.log" 2>&1 &
    pids+=($!)
  done
  say "testing ${LEGS[*]} side by side (logs: ${dirs[*]/%/.log})"
  for i in "${!LEGS[@]}"; do
    wait "${pids[i]}" || failed+=("${LEGS[i]}")
    echo "---- ${LEGS[i]} (${dirs[i]}.log)"
    cat "${dirs[i]}.log"
  done
  trap - EXIT
else
  for i in "${!LEGS[@]}"; do
    test_leg "${LEGS[i]}" "${dirs[i]}" || failed+=("${LEGS[i]}")
  done
fi
if [ ${#failed[@]} -gt 0 ]; then
  say "FAILED: ${failed[*]}" >&2
  exit 1
fi
say "passed: ${LEGS[*]}"
