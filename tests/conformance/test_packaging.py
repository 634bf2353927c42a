"""The collection as Galaxy and Automation Hub get it: `ansible-galaxy collection build` of this checkout,
with what users need and none of the development files (test fleets, venv pins, lint and git settings),
installable the ways the README says (the git URL needs a network and is not tried here)."""

import os
import re
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
GALAXY = BIN / "ansible-galaxy"

SHIPPED = ["MANIFEST.json", "FILES.json", "README.md", "LICENSE", "meta/runtime.yml", "meta/execution-environment.yml",
           "requirements.txt", "bindep.txt", "plugins/modules/capi_rollout_wait.py", "plugins/action/capi_rollout_wait.py",
           "plugins/module_utils/client/waiter.py", "plugins/filter/rollout_setting_errors.py",
           "roles/hardware_refresh/meta/argument_specs.yml", "roles/rollout_report/tasks/main.yml",
           "roles/hardware_refresh/README.md", "roles/rollout_report/README.md",
           "playbooks/hardware_refresh.yml", "docs/rollout-completion.md", "changelogs/changelog.yaml"]
NOT_SHIPPED = ["tests/fleets/", "ansible.cfg", "requirements/", ".ansible-lint", ".pre-commit-config.yaml", "mypy.ini",
               ".gitignore", "tests/sim/",
               "tests/integration/", "tests/conformance/", "tests/crds/", "tests/packaging/", "scripts/", "Makefile",
               ".ci/", "report/", "playbooks/report/", "docs/dev/", "execution-environment/", "galaxy.yml",
               "changelogs/.plugin-cache.yaml", "dist/", "tests/output/", ".build/", ".sim/", ".cache/",
               ".venv", ".venv-floor", ".venv-docs", ".venv-galaxy",
               ".venv-molecule", "extensions/molecule/"]
# written by ansible-galaxy, not in the repository
GENERATED = {"MANIFEST.json", "FILES.json"}


def user_env(home):
    """A user's shell: no ANSIBLE_* of this checkout (its ansible.cfg links capi.rollout), a home of its own."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")}
    env["HOME"] = str(home)
    return env


def run(*args, cwd, env=None):
    proc = subprocess.run([str(a) for a in args], capture_output=True, text=True, check=False, cwd=cwd, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


@pytest.fixture
def tarball(collection_tarball):
    return collection_tarball


def tracked_files():
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, text=True, check=True).stdout
    return {name for name in listed.split("\0") if name}


def test_the_built_collection_has_what_users_need_and_no_development_files(tarball):
    with tarfile.open(tarball) as archive:
        names = set(archive.getnames())
        files = {member.name for member in archive.getmembers() if member.isfile()}
    missing = [name for name in SHIPPED if name not in names]
    assert not missing, missing
    unwanted = sorted(name for name in names for prefix in NOT_SHIPPED if name == prefix.rstrip("/") or name.startswith(prefix))
    assert not unwanted, unwanted
    # nothing that git does not track (a local report, a cache, a scratch file) gets in
    assert not sorted(files - tracked_files() - GENERATED)


def test_every_tracked_file_is_shipped_or_listed_as_a_development_file(tarball):
    """A new top-level file or folder has to be decided on: shipped, or in build_ignore and NOT_SHIPPED."""
    with tarfile.open(tarball) as archive:
        names = set(archive.getnames())
    undecided = sorted(name for name in tracked_files() - names
                       if not any(name == p.rstrip("/") or name.startswith(p) for p in NOT_SHIPPED))
    assert not undecided, undecided


def readme_block(after):
    """The first fenced block of README.md after the line containing `after`."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    match = re.search(re.escape(after) + r".*?\n```[a-z]*\n(.*?)```", text, re.S)
    assert match, after
    return match.group(1)


def test_the_readme_tarball_install_works_for_a_user(tarball, tmp_path):
    version = yaml.safe_load((REPO / "galaxy.yml").read_text(encoding="utf-8"))["version"]
    commands = readme_block("From a tarball built here").strip()
    assert commands == ("ansible-galaxy collection build --output-path dist/ && "
                        f"ansible-galaxy collection install dist/capi-rollout-{version}.tar.gz"), commands
    assert tarball.name == f"capi-rollout-{version}.tar.gz"
    # the second command as a user runs it (into ~/.ansible/collections), then the collection is usable
    home = tmp_path / "home"
    home.mkdir()
    (tmp_path / "dist").mkdir()
    (tmp_path / "dist" / tarball.name).write_bytes(tarball.read_bytes())
    run(GALAXY, "collection", "install", f"dist/{tarball.name}", cwd=tmp_path, env=user_env(home))
    assert (home / ".ansible/collections/ansible_collections/capi/rollout/MANIFEST.json").is_file()
    listed = run(GALAXY, "collection", "list", "capi.rollout", cwd=tmp_path, env=user_env(home))
    assert re.search(rf"capi\.rollout\s+{re.escape(version)}", listed), listed
    doc = run(BIN / "ansible-doc", "capi.rollout.capi_rollout_info", cwd=tmp_path, env=user_env(home))
    assert "capi_rollout_info" in doc
    roles = run(BIN / "ansible-doc", "-t", "role", "-l", "capi.rollout", cwd=tmp_path, env=user_env(home))
    assert "capi.rollout.hardware_refresh" in roles and "capi.rollout.rollout_report" in roles, roles


def test_a_requirements_file_naming_the_tarball_installs_it(tarball, tmp_path):
    # the README's requirements.yml form with a tarball instead of the git URL (same keys otherwise)
    example = yaml.safe_load(readme_block("From a tarball in a `requirements.yml`"))
    (entry,) = example["collections"]
    assert entry["type"] == "file" and entry["name"].endswith(tarball.name), entry
    entry["name"] = str(tarball)
    requirements = tmp_path / "requirements.yml"
    requirements.write_text(yaml.safe_dump(example), encoding="utf-8")
    collections = tmp_path / "collections"
    home = tmp_path / "home"
    home.mkdir()
    run(GALAXY, "collection", "install", "-r", requirements, "-p", collections, cwd=tmp_path, env=user_env(home))
    manifest = collections / "ansible_collections/capi/rollout/MANIFEST.json"
    assert manifest.is_file()
    assert '"name": "rollout"' in manifest.read_text(encoding="utf-8")
