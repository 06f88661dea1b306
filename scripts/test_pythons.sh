#!/usr/bin/env bash
# The tests on the other supported Pythons (make test runs this after the main suite on the default one):
#   3.12:lowest  the lowest declared version of every direct dependency (uv --resolution lowest-direct), so the
#                lower bounds in pyproject.toml are versions this run proves (checked: each one installed exactly);
#   3.13:locked  constraints.txt, the lock the default venv uses.
# On each: the suite minus the markers below, then tests/test_package.py (the wheel in a fresh venv, with the
# versions this leg tested). Indirect dependencies resolve as of the lock's date (its `# exclude-newer:` line),
# so a new release elsewhere cannot change what a fresh clone tests.
# The venvs are cached in .cache/pythons/ and rebuilt when pyproject.toml, constraints.txt, the interpreter or
# the recipe below changes. Each step says how long it took. A missing interpreter is a failure, not a skip.
#
# Usage: scripts/test_pythons.sh [LEG...]      e.g. scripts/test_pythons.sh 3.13:locked
#        scripts/test_pythons.sh --check       only find the interpreters (make test does this first)
set -euo pipefail
cd "$(dirname "$0")/.."

ALL_LEGS=(3.12:lowest 3.13:locked)
check_only=false
if [ "${1:-}" = --check ]; then
  check_only=true
  shift
fi
LEGS=("$@")
[ ${#LEGS[@]} -gt 0 ] || LEGS=("${ALL_LEGS[@]}")
# Left to the main run: Docker sandboxes and the real browser (engines outside Python), and the wheel test,
# which each leg runs on its own below.
SKIP_MARKERS=(docker browser package)
UV=${UV:-.venv/bin/uv}
LOCK=constraints.txt
CACHE=.cache/pythons
export UV_PYTHON_DOWNLOADS=never   # only the interpreters we name; never a download

step=starting
trap 'rc=$?; [ $rc = 0 ] || echo "test_pythons: FAILED in: $step" >&2' EXIT

# timed LABEL CMD...: run CMD and say how long it took.
timed() {
  step=$1
  shift
  local t0 ds
  t0=$(date +%s%N)
  "$@"
  ds=$((($(date +%s%N) - t0) / 100000000))
  printf 'test_pythons: %-38s %4d.%d s\n' "$step" $((ds / 10)) $((ds % 10))
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
  local dir=$1 py=$2 resolution=$3 cutoff=$4
  rm -rf "$dir"
  "$UV" venv -q --seed --python "$py" "$dir"
  case $resolution in
    lowest) "$UV" pip install -q --python "$dir/bin/python" --exclude-newer "$cutoff" --only-binary :all: \
      --resolution lowest-direct -e '.[dev]' ;;
    locked) "$UV" pip install -q --python "$dir/bin/python" --exclude-newer "$cutoff" --only-binary :all: \
      -c "$LOCK" -e '.[dev]' ;;
    *) echo "test_pythons: unknown resolution $resolution" >&2; return 1 ;;
  esac
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
for text in project["dependencies"] + [r for rs in project["optional-dependencies"].values() for r in rs]:
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

if $check_only; then
  for leg in "${LEGS[@]}"; do
    py=$(find_python "${leg%%:*}")
    echo "test_pythons: $leg: $py ($("$py" -V))"
  done
  step=done
  exit 0
fi
[ -x "$UV" ] || { echo "test_pythons: $UV is missing: run make venv first" >&2; exit 1; }
cutoff=$(sed -n 's/^# exclude-newer: \([^ ]*\).*/\1/p' "$LOCK")
[ -n "$cutoff" ] || { echo "test_pythons: $LOCK has no '# exclude-newer:' line: run make lock" >&2; exit 1; }
markers=$(printf ' and not %s' "${SKIP_MARKERS[@]}")
markers=${markers# and }

for leg in "${LEGS[@]}"; do
  version=${leg%%:*}
  resolution=${leg#*:}
  py=$(find_python "$version")
  dir=$CACHE/py$version-$resolution
  key=$({
    declare -f build_venv
    echo "$leg $cutoff"
    "$py" -VV
    cat pyproject.toml
    [ "$resolution" = lowest ] || cat "$LOCK"
  } | sha256sum | cut -c1-32)
  if [ "$(cat "$dir/.key" 2>/dev/null)" = "$key" ] && [ -x "$dir/bin/python" ]; then
    echo "test_pythons: $leg: cached venv $dir ($("$dir/bin/python" -V))"
  else
    timed "$leg: venv ($("$py" -V))" build_venv "$dir" "$py" "$resolution" "$cutoff"
    echo "$key" >"$dir/.key"
  fi
  [ "$resolution" != lowest ] || timed "$leg: lower bounds installed" check_lowest "$dir/bin/python"
  timed "$leg: pytest -m '$markers'" "$dir/bin/python" -m pytest -q -p no:cacheprovider -m "$markers"
  timed "$leg: wheel in a fresh venv" env RSR_PACKAGE_CONSTRAINTS="$PWD/$dir/freeze.txt" \
    "$dir/bin/python" -m pytest -q -p no:cacheprovider -m package tests/test_package.py
done
step=done
