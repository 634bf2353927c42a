# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import json
import os
import subprocess
import sys
from pathlib import Path

from ansible_collections.capi.rollout.plugins.plugin_utils.lazy_import import LazyModule

FILTERS = Path(__file__).resolve().parents[4] / "plugins" / "filter"
MODULE_UTILS = "ansible_collections.capi.rollout.plugins.module_utils."

# Loads every filter file as ansible-core's Jinja2Loader does in each worker process, then lists the collection's
# module_utils that got imported; calling one filter afterwards must import what it needs.
PROBE = r"""
import json, sys
from pathlib import Path
names = sorted(p.stem for p in Path(sys.argv[1]).glob("*.py"))
plugins = {}
for name in names:
    module = __import__("ansible_collections.capi.rollout.plugins.filter." + name, fromlist=["FilterModule"])
    plugins.update(module.FilterModule().filters())
loaded = sorted(m for m in sys.modules if m.startswith(sys.argv[2]))
when = plugins["rollout_server_time"]({"server": "2026-12-03T10:00:00Z", "controller": 100.0}, at=160.0)
after = sorted(m for m in sys.modules if m.startswith(sys.argv[2]))
print(json.dumps({"filters": len(plugins), "loaded": loaded, "when": when, "after": after}))
"""


def test_nothing_is_imported_before_an_attribute_is_used():
    name = MODULE_UTILS + "core.versionskew"
    imported = sys.modules.pop(name, None)
    try:
        module = LazyModule(name)
        assert name not in sys.modules
        assert callable(module.check)
        assert name in sys.modules
    finally:
        # the other tests keep the module object they imported
        if imported is not None:
            sys.modules[name] = imported


def test_loading_every_filter_file_imports_no_module_utils_until_a_filter_is_called():
    out = subprocess.run([sys.executable, "-c", PROBE, str(FILTERS), MODULE_UTILS], check=True, capture_output=True,
                         text=True, env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    probe = json.loads(out.stdout)
    assert probe["filters"] >= 19
    assert probe["loaded"] == []
    # positive control: the filter called imports its code and works
    assert probe["when"] == "2026-12-03T10:01:00Z"
    assert MODULE_UTILS + "core.timeutil" in probe["after"]
