# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The import layers of docs/dev/CONTRACTS.md ("Layout"), checked on the source of every file under plugins/.

modules -> flows -> client -> core: a layer imports only the ones below it. report/ formats over core/; the
controller-only code (filters, plugin_utils, action plugins) sits on top. Nothing in core/ or report/ does I/O or
reads the local clock; only modules/ and flows/ know AnsibleModule; what runs on the target (modules and
module_utils) imports nothing of ansible-core but ``ansible.module_utils``. The file is parsed, never imported, so a
filter's ``LazyModule("...")`` counts as the import it is.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import ast
from pathlib import Path

import pytest

PLUGINS = Path(__file__).resolve().parents[3] / "plugins"
COLLECTION = "ansible_collections.capi.rollout.plugins."

# The parts of the collection each part may import (itself included where listed). A new folder under plugins/ or
# module_utils/ fails the test until it has a row here and in CONTRIBUTING.md.
ALLOWED = {
    "module_utils/core": {"module_utils/core"},
    "module_utils/client": {"module_utils/core", "module_utils/client"},
    "module_utils/flows": {"module_utils/core", "module_utils/client", "module_utils/flows"},
    "modules": {"module_utils/flows"},
    "module_utils/report": {"module_utils/core", "module_utils/report"},
    "plugin_utils": {"module_utils/core", "module_utils/report", "plugin_utils"},
    "filter": {"module_utils/core", "module_utils/report", "plugin_utils"},
    "lookup": {"module_utils/core", "plugin_utils"},
    # an action plugin runs its module (and reads its option specs in flows/args.py); it never talks to the API itself
    "action": {"module_utils/core", "module_utils/flows", "module_utils/report", "plugin_utils"},
    "doc_fragments": set(),
}
# shipped to the target inside the module (AnsiballZ carries module_utils only)
TARGET_SIDE = ("modules", "module_utils/core", "module_utils/client", "module_utils/flows", "module_utils/report")
ANSIBLE_MODULE = "ansible.module_utils.basic"
KNOWS_ANSIBLE_MODULE = ("modules", "module_utils/flows")
PURE = ("module_utils/core", "module_utils/report")
IO_MODULES = {"asyncio", "ftplib", "glob", "http", "io", "kubernetes", "multiprocessing", "os", "pathlib", "queue",
              "requests", "select", "selectors", "shutil", "smtplib", "socket", "ssl", "subprocess", "tempfile",
              "threading", "time", "urllib", "urllib3"}
IO_BUILTINS = {"open", "print", "input"}
CLOCK_READS = {"now", "utcnow", "today"}  # datetime.datetime.now() and kin: the pure code is handed ``now``
IMPORTS_BY_STRING = {"LazyModule", "import_module"}


def part_of(path):
    """``module_utils/<folder>`` for a module_utils file, else the folder under plugins/ (``modules``, ``filter``, ...)."""
    folders = path.parts[:-1]
    if folders and folders[0] == "module_utils":
        return "/".join(folders[:2])
    return folders[0] if folders else ""


def _target_part(name):
    """The part of the collection a dotted ``ansible_collections.capi.rollout.plugins.`` name is in."""
    rest = name[len(COLLECTION):].split(".")
    return "/".join(rest[:2]) if rest[0] == "module_utils" else rest[0]


def imported_names(tree, package):
    """(line, dotted name) of every import of ``tree``; ``package`` resolves relative imports."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            names_folder = base + "." == COLLECTION or base.endswith(".module_utils")
            for alias in node.names:
                # "from a.b import c": c is a module or a name of a.b, in a.b's part, unless a.b is a folder of parts
                yield node.lineno, f"{base}.{alias.name}" if names_folder else base
        elif isinstance(node, ast.Call):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if called in IMPORTS_BY_STRING and node.args and isinstance(node.args[0], ast.Constant) \
                    and isinstance(node.args[0].value, str):
                yield node.lineno, node.args[0].value


def _io_calls(tree):
    """(line, what) of the builtins that do I/O and the local clock reads in ``tree``."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        if isinstance(node.func, ast.Name) and node.func.id in IO_BUILTINS:
            yield node.lineno, f"{node.func.id}()"
        elif isinstance(node.func, ast.Attribute) and node.func.attr in CLOCK_READS:
            yield node.lineno, f".{node.func.attr}() (the local clock)"


def violations(plugins):
    """Every break of the layer rules in the tree ``plugins`` (a plugins/ folder), one sentence each."""
    out = []
    for path in sorted(plugins.rglob("*.py")):
        rel = path.relative_to(plugins)
        where = f"plugins/{rel.as_posix()}"
        part = part_of(rel)
        if part not in ALLOWED:
            out.append(f"{where}: part {part or '(top)'} has no row in ALLOWED of {Path(__file__).name}: add its layer "
                       "rules there and in CONTRIBUTING.md")
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        package = COLLECTION + ".".join(rel.parts[:-1])
        for line, name in imported_names(tree, package):
            top = name.split(".")[0]
            if name.startswith(COLLECTION):
                target = _target_part(name)
                if target not in ALLOWED[part]:
                    allowed = ", ".join(sorted(ALLOWED[part])) or "nothing of the collection"
                    out.append(f"{where}:{line}: {part} imports {target} ({name}); {part} may import {allowed}")
            elif top == "ansible":
                if part in TARGET_SIDE and not name.startswith("ansible.module_utils"):
                    out.append(f"{where}:{line}: {part} runs on the target and imports {name}; only "
                               "ansible.module_utils is there")
                if name.startswith(ANSIBLE_MODULE) and part not in KNOWS_ANSIBLE_MODULE:
                    out.append(f"{where}:{line}: {part} imports {name}; AnsibleModule belongs to "
                               f"{' and '.join(KNOWS_ANSIBLE_MODULE)} only")
            elif part in PURE and top in IO_MODULES:
                out.append(f"{where}:{line}: {part} imports {name}; {part} does no I/O (it is handed objects and `now`)")
        if part in PURE:
            for line, what in _io_calls(tree):
                out.append(f"{where}:{line}: {part} calls {what}; {part} does no I/O (it is handed objects and `now`)")
    return out


def imports_between(plugins):
    """{(part, imported part)} of the collection's own imports in ``plugins``."""
    pairs = set()
    for path in plugins.rglob("*.py"):
        rel = path.relative_to(plugins)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for _line, name in imported_names(tree, COLLECTION + ".".join(rel.parts[:-1])):
            if name.startswith(COLLECTION):
                pairs.add((part_of(rel), _target_part(name)))
    return pairs


def test_the_collection_keeps_its_layers():
    assert violations(PLUGINS) == []


def test_the_scan_sees_the_imports_it_judges():
    # positive control: a parser that found nothing would pass the test above
    pairs = imports_between(PLUGINS)
    for expected in [("modules", "module_utils/flows"), ("module_utils/flows", "module_utils/client"),
                     ("module_utils/client", "module_utils/core"), ("module_utils/report", "module_utils/core"),
                     ("filter", "module_utils/core"), ("filter", "module_utils/report"),
                     ("plugin_utils", "module_utils/report"), ("action", "plugin_utils")]:
        assert expected in pairs


def _tree(tmp_path, files):
    for name, text in files.items():
        path = tmp_path / "plugins" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path / "plugins"


MU = "from ansible_collections.capi.rollout.plugins.module_utils"


@pytest.mark.parametrize("name, text, expected", [
    ("module_utils/core/a.py", f"{MU}.client import requests\n",
     "plugins/module_utils/core/a.py:1: module_utils/core imports module_utils/client"),
    ("module_utils/client/a.py", f"{MU}.flows.run import Run\n",
     "plugins/module_utils/client/a.py:1: module_utils/client imports module_utils/flows"),
    ("module_utils/client/a.py", "from ..flows import run\n",
     "plugins/module_utils/client/a.py:1: module_utils/client imports module_utils/flows"),
    ("module_utils/core/a.py", f"{MU} import report\n",
     "plugins/module_utils/core/a.py:1: module_utils/core imports module_utils/report"),
    ("modules/m.py", f"{MU}.core import paths\n", "plugins/modules/m.py:1: modules imports module_utils/core"),
    ("module_utils/report/a.py", f"{MU}.client import reading\n",
     "plugins/module_utils/report/a.py:1: module_utils/report imports module_utils/client"),
    ("module_utils/core/a.py", "from ansible_collections.capi.rollout.plugins.plugin_utils import unsafe\n",
     "plugins/module_utils/core/a.py:1: module_utils/core imports plugin_utils"),
    ("filter/f.py", 'x = LazyModule("ansible_collections.capi.rollout.plugins.module_utils.flows.run")\n',
     "plugins/filter/f.py:1: filter imports module_utils/flows"),
    ("module_utils/core/a.py", "import urllib3\n", "plugins/module_utils/core/a.py:1: module_utils/core imports urllib3"),
    ("module_utils/core/a.py", "from time import sleep\n", "plugins/module_utils/core/a.py:1: module_utils/core imports time"),
    ("module_utils/report/a.py", "import os.path\n", "plugins/module_utils/report/a.py:1: module_utils/report imports os.path"),
    ("module_utils/core/a.py", "import datetime\nx = datetime.datetime.now()\n",
     "plugins/module_utils/core/a.py:2: module_utils/core calls .now() (the local clock)"),
    ("module_utils/core/a.py", "data = open('f').read()\n", "plugins/module_utils/core/a.py:1: module_utils/core calls open()"),
    ("module_utils/client/a.py", "from ansible.module_utils.basic import AnsibleModule\n",
     "plugins/module_utils/client/a.py:1: module_utils/client imports ansible.module_utils.basic"),
    ("module_utils/flows/a.py", "from ansible.errors import AnsibleError\n",
     "plugins/module_utils/flows/a.py:1: module_utils/flows runs on the target and imports ansible.errors"),
    ("module_utils/new/a.py", "x = 1\n", "plugins/module_utils/new/a.py: part module_utils/new has no row"),
])
def test_a_file_that_breaks_a_layer_rule_is_named(tmp_path, name, text, expected):
    good = {"module_utils/flows/ok.py": f"{MU}.client import reading\n{MU}.core import paths\n",
            "module_utils/client/ok.py": "import socket\nimport time\n",
            "filter/ok.py": 'x = LazyModule("ansible_collections.capi.rollout.plugins.module_utils.report.page")\n'}
    assert violations(_tree(tmp_path / "good", good)) == []
    found = violations(_tree(tmp_path / "bad", dict(good, **{name: text})))
    assert len(found) == 1 and found[0].startswith(expected), found
