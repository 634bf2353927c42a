# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters and a doc fragment renamed for one meaning per word (issue 25 §2, docs/dev/STYLE.md "Names") keep their old names working, with a
deprecation, through meta/runtime.yml."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import importlib
import pathlib

import pytest
import yaml

RENAMED = {"rollout_refresh_record": "rollout_refresh_step", "rollout_refresh_targets": "rollout_refresh_objects"}
RUNTIME = yaml.safe_load((pathlib.Path(__file__).parents[3] / "meta" / "runtime.yml").read_text())["plugin_routing"]
ROUTING = RUNTIME["filter"]


@pytest.mark.parametrize("old, new", sorted(RENAMED.items()))
def test_the_old_name_redirects_to_the_new_filter_with_a_deprecation(old, new):
    route = ROUTING[old]
    assert route["redirect"] == f"capi.rollout.{new}"
    assert route["deprecation"]["removal_version"] == "3.0.0" and new in route["deprecation"]["warning_text"]
    plugin = importlib.import_module(f"ansible_collections.capi.rollout.plugins.filter.{new}")
    assert new in plugin.FilterModule().filters()
    assert not (pathlib.Path(plugin.__file__).parent / f"{old}.py").exists()


def test_every_route_is_a_rename_listed_here():
    assert set(ROUTING) == set(RENAMED)


def test_the_old_doc_fragment_redirects_to_the_new_one():
    route = RUNTIME["doc_fragments"]["targets"]
    assert route["redirect"] == "capi.rollout.objects" and route["deprecation"]["removal_version"] == "3.0.0"
    fragment = importlib.import_module("ansible_collections.capi.rollout.plugins.doc_fragments.objects").ModuleDocFragment
    assert "kind" in yaml.safe_load(fragment.DOCUMENTATION)["options"]
    assert set(RUNTIME) == {"filter", "doc_fragments"}
