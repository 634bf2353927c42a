"""The collection as Galaxy and Automation Hub get it: `ansible-galaxy collection build` of this checkout,
with what users need and none of the development files (test fleets, venv pins, lint and git settings)."""

import subprocess
import sys
import tarfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
GALAXY = Path(sys.executable).parent / "ansible-galaxy"

SHIPPED = ["MANIFEST.json", "FILES.json", "README.md", "LICENSE", "meta/runtime.yml", "meta/execution-environment.yml",
           "requirements.txt", "bindep.txt", "plugins/modules/capi_rollout_wait.py", "plugins/action/capi_rollout_wait.py",
           "plugins/module_utils/client/waiter.py", "plugins/filter/rollout_setting_errors.py",
           "roles/hardware_refresh/meta/argument_specs.yml", "roles/rollout_report/tasks/main.yml",
           "playbooks/hardware_refresh.yml", "docs/rollout-completion.md", "changelogs/changelog.yaml"]
NOT_SHIPPED = ["tests/fleets/", "ansible.cfg", "requirements/", ".ansible-lint", ".gitignore", "tests/sim/",
               "tests/integration/", "tests/crds/", "scripts/", "Makefile", ".ci/", "report/", ".venv",
               "extensions/molecule/"]


def test_the_built_collection_has_what_users_need_and_no_development_files(tmp_path):
    proc = subprocess.run([str(GALAXY), "collection", "build", str(REPO), "--output-path", str(tmp_path)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (tarball,) = tmp_path.glob("capi-rollout-*.tar.gz")
    with tarfile.open(tarball) as archive:
        names = set(archive.getnames())
    missing = [name for name in SHIPPED if name not in names]
    assert not missing, missing
    unwanted = sorted(name for name in names for prefix in NOT_SHIPPED if name == prefix.rstrip("/") or name.startswith(prefix))
    assert not unwanted, unwanted
