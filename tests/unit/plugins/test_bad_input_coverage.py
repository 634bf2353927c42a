# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every option of every module (from their argument specs) and every variable of playbooks/hardware_refresh.yml has
a bad-input case in tests/integration/bad_inputs.py (run by test_bad_input_matrix.py): a new option without one fails
here. The playbook's variables are core.settings.PLAYBOOK_VARIABLES, which must be those the playbooks read and list."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import importlib
import importlib.util
import os
import re

import pytest
import yaml

from ansible_collections.capi.rollout.plugins.action.capi_rollout_report import ARGUMENT_SPEC as REPORT_SPEC
from ansible_collections.capi.rollout.plugins.module_utils.core import settings
from ansible_collections.capi.rollout.plugins.module_utils.flows.args import AUTH_ARG_SPEC

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
MODULES = ("capi_machine_template", "capi_refresh_plan", "capi_rollout_info", "capi_rollout_lock", "capi_rollout_pause",
           "capi_rollout_restart", "capi_rollout_undo", "capi_rollout_wait")


def _bad_inputs():
    spec = importlib.util.spec_from_file_location("bad_inputs", os.path.join(ROOT, "tests", "integration", "bad_inputs.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BAD_INPUTS = _bad_inputs()


class Captured(Exception):
    pass


def argument_spec(monkeypatch, name):
    """The argument spec the module hands to its RolloutModule."""
    module = importlib.import_module(f"ansible_collections.capi.rollout.plugins.modules.{name}")
    captured = {}

    def capture(**kwargs):
        captured.update(kwargs)
        raise Captured()

    monkeypatch.setattr(module, "RolloutModule", capture)
    with pytest.raises(Captured):
        module.main()
    return captured["argument_spec"]


def _strings(value):
    """The text of ``value``, of its items and of its keys and values."""
    if isinstance(value, dict):
        return [text for key, item in value.items() for text in [str(key)] + _strings(item)]
    if isinstance(value, list):
        return [text for item in value for text in _strings(item)]
    return [str(value)]


def covers(case, option, spec):
    """The case gives ``option`` (or an alias) and its message names the option or a value given in it."""
    _module, params, _check, reason, texts = case
    texts = [texts] if isinstance(texts, str) else list(texts)
    told = " ".join(texts + [reason or ""]).lower()
    for name in [option] + list(spec.get("aliases") or []):
        if name in params and (name.lower() in told or any(text.lower()[:40] in told for text in _strings(params[name]) if text)):
            return True
    return False


def test_every_module_option_has_a_bad_input_case(monkeypatch):
    specs = {name: argument_spec(monkeypatch, name) for name in MODULES}
    specs["capi_rollout_report"] = REPORT_SPEC
    missing = []
    for module, spec in sorted(specs.items()):
        cases = [case for case in BAD_INPUTS.MODULE_CASES if case[0] == module]
        for option, option_spec in sorted(spec.items()):
            # the connection options are the same code in every module: one case each, in any module
            pool = BAD_INPUTS.MODULE_CASES if option in AUTH_ARG_SPEC else cases
            if not any(covers(case, option, option_spec) for case in pool):
                missing.append(f"{module}: {option}")
    assert not missing, "options without a bad-input case in tests/integration/bad_inputs.py: " + ", ".join(missing)
    assert len(BAD_INPUTS.MODULE_CASES) + len(BAD_INPUTS.PLAYBOOK_CASES) >= 150


def test_every_playbook_variable_has_a_bad_input_case():
    given = {name for variables, _texts in BAD_INPUTS.PLAYBOOK_CASES for name in variables}
    assert set(settings.PLAYBOOK_VARIABLES) - given == set()


def _read(name):
    with open(os.path.join(ROOT, "playbooks", name), encoding="utf-8") as handle:
        return handle.read()


def test_the_table_of_playbook_variables_is_what_the_playbooks_read_and_list():
    refresh, restart = _read("hardware_refresh.yml"), _read("restart.yml")
    header = "".join(line for line in (refresh + restart).splitlines(True) if line.startswith("#"))
    # every variable is in the header of one of the two playbooks
    assert [name for name in settings.PLAYBOOK_VARIABLES if not re.search(rf"\b{name}\b", header)] == []
    # every variable the playbook reads with a default, and every option it hands to the role, is in the table
    code = "".join(line for line in refresh.splitlines(True) if not line.lstrip().startswith("#"))
    read = set(re.findall(r"(?:\{\{|\(|,|\bor|\belse|\bif)\s*([a-z][a-z_]*) \| default\(", code))
    read |= set(next(play for play in yaml.safe_load(refresh) if "_role_options" in play.get("vars", {}))["vars"]["_role_options"])
    foreign = {name for name in read if name.startswith(settings.FOREIGN_PREFIXES)}
    assert read - foreign - set(settings.PLAYBOOK_VARIABLES) == set()
