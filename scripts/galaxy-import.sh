#!/usr/bin/env bash
# Build the collection tarball and import it with galaxy-importer, locally (no container engine):
# the config is tests/packaging/galaxy-importer.cfg. Fails when the import fails or its log has any
# WARNING or ERROR line. The log and importer_result.json stay in .build/galaxy-import/.
# usage: scripts/galaxy-import.sh BUILD_VENV IMPORTER_VENV
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_venv=$(cd "$1" && pwd) importer_venv=$(cd "$2" && pwd)
out=$root/.build/galaxy-import
rm -rf "$out" && mkdir -p "$out/dist" "$out/tmp"
"$build_venv/bin/ansible-galaxy" collection build "$root" --output-path "$out/dist" >/dev/null
tarball=$(ls "$out"/dist/capi-rollout-*.tar.gz)
cd "$out"
status=0
# The importer finds ansible-doc on PATH; its temporary files go under .build.
env PATH="$importer_venv/bin:$PATH" GALAXY_IMPORTER_CONFIG="$root/tests/packaging/galaxy-importer.cfg" \
  GALAXY_IMPORTER_ANSIBLE_LOCAL_TMP="$out/tmp" \
  "$importer_venv/bin/python" -m galaxy_importer.main "$tarball" >import.log 2>&1 || status=$?
if [ "$status" -ne 0 ] || grep -qE '^(WARNING|ERROR)' import.log || ! grep -q '^Importer processing completed successfully' import.log; then
  grep -vE '^Loading ' import.log >&2
  echo "galaxy-import: $(basename "$tarball") was not accepted cleanly (exit $status; full log: $out/import.log)" >&2
  exit 1
fi
echo "galaxy-import: $(basename "$tarball") imported with no warning ($(grep -c '^Loading ' import.log) items; log: $out/import.log)"
