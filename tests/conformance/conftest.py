"""Conformance tests run against real local kube-apiservers (tests/sim/capisim).

Puts tests/sim on sys.path and loads the capisim pytest plugin, so that a plain
``python -m pytest tests/conformance`` works as well as ``-p capisim.pytest_plugin``.
"""

import sys
from pathlib import Path

SIM = str(Path(__file__).resolve().parents[1] / "sim")
if SIM not in sys.path:
    sys.path.insert(0, SIM)


def pytest_configure(config):
    if not config.pluginmanager.hasplugin("capisim.pytest_plugin"):
        config.pluginmanager.import_plugin("capisim.pytest_plugin")


# `make collection-link` exposes the collection as .build/ansible_collections/capi/rollout, so
# tests here can import the core the way Ansible does.
BUILD = str(Path(__file__).resolve().parents[2] / ".build")
if BUILD not in sys.path:
    sys.path.insert(0, BUILD)
