"""A green test run never hides tests that did not run: an unexpected skip fails the run
(capisim.pytest_plugin), a declared opt-in skip does not."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

SIM = Path(__file__).resolve().parents[1] / "sim"


def _run(tmp_path, body, **env):
    (tmp_path / "test_sample.py").write_text("import pytest\n\n" + body, encoding="utf-8")
    environ = {key: value for key, value in os.environ.items() if key not in ("CAPISIM_ALLOW_SKIPS", "CAPISIM_NO_CONTROLLER")}
    environ.update(env, PYTHONPATH=str(SIM))
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "capisim.pytest_plugin", "-p", "no:cacheprovider",
                           str(tmp_path)], cwd=str(tmp_path), env=environ, capture_output=True, text=True, check=False)


@pytest.mark.parametrize("body, env, code", [
    ("def test_ok():\n    assert True\n", {}, 0),
    ("def test_gone():\n    pytest.skip('kubectl not installed')\n", {}, 1),
    ("@pytest.mark.skipif(True, reason='opt-in: X=1 runs it')\ndef test_opt_in():\n    pass\n", {}, 0),
    ("@pytest.mark.needs_controller\ndef test_sim():\n    pass\n", {"CAPISIM_NO_CONTROLLER": "1"}, 1),
    ("@pytest.mark.needs_controller\ndef test_sim():\n    pass\n", {"CAPISIM_NO_CONTROLLER": "1", "CAPISIM_ALLOW_SKIPS": "1"}, 0),
], ids=["passing", "unexpected-skip", "opt-in-skip", "no-controller", "skips-allowed"])
def test_unexpected_skips_fail_the_run(tmp_path, body, env, code):
    proc = _run(tmp_path, body, **env)
    assert proc.returncode == code, proc.stdout + proc.stderr
    if code == 1:
        assert "skipped that were not told to skip" in proc.stdout, proc.stdout
