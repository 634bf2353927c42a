#!/usr/bin/env bash
# Create or refresh a virtualenv from a pinned requirements file; reused when the file is unchanged.
# usage: scripts/venv.sh DIR REQUIREMENTS PYTHON_MINOR...   (e.g. .venv requirements/controller.txt 3.13 3.12)
set -euo pipefail
dir=$1 req=$2; shift 2

find_python() {
  local v p
  for v in "$@"; do
    for p in "python$v" "$HOME/.pyenv/versions/$v"*/bin/"python$v"; do
      if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import venv, ensurepip' >/dev/null 2>&1; then
        command -v "$p"; return 0
      fi
    done
  done
  return 1
}

stamp=$dir/.requirements.sha256
sum=$(sha256sum "$req" | cut -d' ' -f1)
if [ -x "$dir/bin/python" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$sum" ]; then exit 0; fi

py=$(find_python "$@") || {
  echo "venv.sh: no Python $* found on PATH or under ~/.pyenv/versions; install one of them (e.g. 'pyenv install $1')" >&2
  exit 1
}
echo "[venv] $dir with $py ($("$py" --version)) from $req" >&2
[ -x "$dir/bin/python" ] || "$py" -m venv "$dir"
"$dir/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip >&2
# --no-compile: Python compiles a module at its first import and keeps the bytecode; pip would compile every file of
# every package (most are never imported here), half the CPU of making the venv.
"$dir/bin/python" -m pip install -q --disable-pip-version-check --no-compile -r "$req" >&2
echo "$sum" > "$stamp"
