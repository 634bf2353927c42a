"""Conformance tests run against real local kube-apiservers (tests/sim/capisim).

Puts tests/sim on sys.path and loads the capisim pytest plugin, so that a plain
``python -m pytest tests/conformance`` works as well as ``-p capisim.pytest_plugin``.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

SIM = str(Path(__file__).resolve().parents[1] / "sim")
if SIM not in sys.path:
    sys.path.insert(0, SIM)


def pytest_configure(config):
    if not config.pluginmanager.hasplugin("capisim.pytest_plugin"):
        config.pluginmanager.import_plugin("capisim.pytest_plugin")


# `make collection-link` exposes the collection as .build/ansible_collections/capi/rollout, so
# tests here can import the core the way Ansible does.
REPO = Path(__file__).resolve().parents[2]
BUILD = str(REPO / ".build")
if BUILD not in sys.path:
    sys.path.insert(0, BUILD)


@pytest.fixture(scope="session")
def collection_tarball(tmp_path_factory):
    """`ansible-galaxy collection build` of this checkout, once per session, as a user runs it (no ANSIBLE_*
    settings of this checkout); used by test_packaging.py and test_execution_environment.py."""
    out = tmp_path_factory.mktemp("dist")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANSIBLE_")}
    env["HOME"] = str(out)
    proc = subprocess.run([str(Path(sys.executable).parent / "ansible-galaxy"), "collection", "build", str(REPO),
                           "--output-path", str(out)], capture_output=True, text=True, check=False, cwd=out, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (built,) = out.glob("capi-rollout-*.tar.gz")
    return built
