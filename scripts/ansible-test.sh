#!/usr/bin/env bash
# Run ansible-test from a given venv, offline-safe and without Docker:
# - ansible-test needs the collection under .../ansible_collections/capi/rollout and resolves the
#   physical working directory, so a symlink is not enough: copy the files git would ship
#   (tracked + untracked-but-not-ignored) into a directory outside this git work tree (inside it,
#   ansible-test would see the copy as git-ignored and skip every target).
# - `--venv` bootstraps pip by downloading get-pip.py; this machine has no route to that host, so
#   a stand-in that uses ensurepip + PyPI is placed in ansible-test's cache first.
# usage: scripts/ansible-test.sh VENV_DIR sanity|units [ansible-test args...]
set -euo pipefail
venv=$(cd "$1" && pwd); shift
root=$(cd "$(dirname "$0")/.." && pwd)
py=$venv/bin/python
pyver=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')

pip_version=$(grep -oE "pip='[0-9.]+'" "$venv"/lib/python*/site-packages/ansible_test/_internal/python_requirements.py | head -1 | tr -dc '0-9.')
[ -n "$pip_version" ] || pip_version=$(grep -oE "pip==[0-9.]+" -r "$venv"/lib/python*/site-packages/ansible_test/_data/requirements/ 2>/dev/null | head -1 | sed 's/.*==//')
cache=$HOME/.ansible/test/cache
mkdir -p "$cache"
stand_in=$cache/get_pip_${pip_version//./_}.py
if [ ! -s "$stand_in" ] || ! grep -q capi-rollout "$stand_in"; then
  cat > "$stand_in" <<'PY'
# capi-rollout stand-in for get-pip.py (no route to ci-files.testing.ansible.com here):
# bootstrap pip with ensurepip, then install the requested packages from the package index.
import subprocess
import sys

args = [a for a in sys.argv[1:] if a not in ('--no-setuptools', '--no-wheel')]
subprocess.check_call([sys.executable, '-m', 'ensurepip', '--default-pip'])
subprocess.check_call([sys.executable, '-m', 'pip', 'install'] + args)
PY
fi

# keyed by checkout and venv: two clones or worktrees running ansible-test at once must not remove each other's copy
dest=${TMPDIR:-/tmp}/capi-rollout-ansible-test/$(printf '%s\0%s' "$root" "$venv" | sha256sum | cut -c1-12)/ansible_collections/capi/rollout
rm -rf "$dest" && mkdir -p "$dest"
# (files deleted but not yet committed are left out: a loop of builtins, no process per file)
(cd "$root" && git ls-files -co --exclude-standard -z | while IFS= read -r -d '' f; do [ ! -e "$f" ] || printf '%s\0' "$f"; done \
  | tar --null -T - -cf -) | tar -xf - -C "$dest"
cd "$dest"
export PATH=$venv/bin:$PATH
# sanity: --venv, ansible-test's own pinned linters in venvs it keeps under ~/.ansible/test. units: --local, the
# venv's pinned pytest and requirements (requirements/*.txt); --venv would build and fill a new venv on every run,
# twice the CPU of the unit tests themselves.
case $1 in units) where=--local ;; *) where=--venv ;; esac
exec "$venv/bin/ansible-test" "$@" "$where" --python "$pyver" --color no
