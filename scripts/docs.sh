#!/usr/bin/env bash
# Render the collection docs (modules, filters, roles) with antsibull-docs and Sphinx into
# .build/docs/build/html, warnings as errors. Offline: intersphinx uses a local inventory of the
# docs.ansible.com labels the generated pages link to (tests/packaging/ansible_docs_inventory.py).
# The collection is found through ansible.cfg's collections_path (.build, `make collection-link`).
# usage: scripts/docs.sh DOCS_VENV
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv=$(cd "$1" && pwd)
export PATH=$venv/bin:$PATH ANSIBLE_CONFIG=$root/ansible.cfg
site=$root/.build/docs
rm -rf "$site" && mkdir -p "$site" && chmod 755 "$site"   # antsibull-docs wants it writable by its owner only
antsibull-docs sphinx-init --use-current --fail-on-error --no-add-antsibull-docs-version --dest-dir "$site" \
  --project capi.rollout --copyright 'capi.rollout contributors' --title 'capi.rollout collection' \
  --html-short-title capi.rollout capi.rollout >/dev/null
python "$root/tests/packaging/ansible_docs_inventory.py" "$site/ansible_devel.inv"
cat >> "$site/conf.py" <<'PY'

# capi.rollout: offline build - only the local inventory of docs.ansible.com labels (scripts/docs.sh).
intersphinx_mapping = {'ansible_devel': ('https://docs.ansible.com/projects/ansible/devel/', '../ansible_devel.inv')}
PY
cd "$site"
mkdir -p rst && chmod og-w rst
antsibull-docs --config-file antsibull-docs.cfg collection --cleanup everything --fail-on-error --use-current \
  --dest-dir rst capi.rollout >/dev/null
sphinx-build -M html rst build -c . -W --keep-going -q
echo "docs: $site/build/html/index.html"
