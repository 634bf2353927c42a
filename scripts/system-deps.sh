#!/usr/bin/env bash
# Debian packages the tests need beyond the API-server build (which installs its own):
# the shellcheck package, so that the sanity test of that name runs instead of being skipped,
# chromium, to render the fleet report in the browser test, and libfaketime, to run modules with an
# Ansible host clock that disagrees with the API server's.
set -euo pipefail
need=()
for p in shellcheck etcd-server chromium libfaketime; do dpkg -s "$p" >/dev/null 2>&1 || need+=("$p"); done
[ ${#need[@]} -eq 0 ] && exit 0
sudo_cmd=""; [ "$(id -u)" = 0 ] || sudo_cmd="sudo"
echo "[system-deps] installing ${need[*]}" >&2
$sudo_cmd apt-get update -qq >&2
DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
