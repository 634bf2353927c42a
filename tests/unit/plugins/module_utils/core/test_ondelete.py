# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import pytest

from ansible_collections.capi.rollout.plugins.module_utils.core import ondelete
from ansible_collections.capi.rollout.tests.unit.plugins.module_utils.core import capi_objects as objs


def _on_delete_md(version, replicas=3, infra="md-0-infra-v2"):
    md = objs.machine_deployment(version, replicas=replicas, infra=infra)
    if version == "v1beta1":
        md["spec"]["strategy"] = {"type": "OnDelete"}
    else:
        md["spec"]["rollout"] = {"strategy": {"type": "OnDelete"}}
    return md


def _pool(version, old=(), new=(), replicas=3):
    """An OnDelete pool switched from md-0-infra-v1 (MachineSet md-0-old) to md-0-infra-v2 (md-0-new): ``old`` and
    ``new`` are (name, ready, deleting, created) of the Machines of each MachineSet."""
    md = _on_delete_md(version, replicas=replicas)
    sets = [objs.machine_set(version, suffix="old", revision="1", infra="md-0-infra-v1"),
            objs.machine_set(version, suffix="new", revision="2", infra="md-0-infra-v2")]
    machines = []
    for ms_name, entries in (("md-0-old", old), ("md-0-new", new)):
        for name, ready, deleting, created in entries:
            machine = objs.machine(version, name=name, ms_name=ms_name, ready=ready, deleting=deleting)
            machine["metadata"]["creationTimestamp"] = created
            machines.append(machine)
    return md, sets, machines


T1, T2, T3, T4 = "2026-01-01T00:00:01Z", "2026-01-01T00:00:02Z", "2026-01-01T00:00:03Z", "2026-01-01T00:00:04Z"


@pytest.mark.parametrize("version", objs.VERSIONS)
def test_the_oldest_ready_machine_goes_first_one_at_a_time(version):
    md, sets, machines = _pool(version, old=[("b", True, False, T2), ("a", True, False, T3), ("c", True, False, T1)])
    step = ondelete.pool_step(md, sets, machines, max_unavailable=1)
    assert step["delete"] == ["c"] and not step["done"]
    assert step["old"] == ["c", "b", "a"]
    assert "0 of 3 Machine(s) on the new template, 3 to replace; deleting c" in step["message"]


@pytest.mark.parametrize("version", objs.VERSIONS)
def test_nothing_more_is_deleted_while_a_replacement_is_not_ready_or_a_machine_is_deleting(version):
    md, sets, machines = _pool(version, old=[("a", True, False, T1), ("b", True, False, T2)], new=[("n1", False, False, T3)])
    step = ondelete.pool_step(md, sets, machines, max_unavailable=1)
    assert step["delete"] == [] and step["not_ready"] == ["n1"] and step["unavailable"] == 1
    assert "waiting for n1 to be ready" in step["message"]
    md, sets, machines = _pool(version, old=[("a", True, True, T1), ("b", True, False, T2), ("c", True, False, T3)])
    step = ondelete.pool_step(md, sets, machines, max_unavailable=1)
    # the Machine being deleted is neither deleted again nor counted as old; its slot is the one unavailable
    assert step["delete"] == [] and step["deleting"] == ["a"] and step["old"] == ["b", "c"]


@pytest.mark.parametrize("version", objs.VERSIONS)
def test_the_pace_is_the_number_of_machines_short_of_ready_replicas(version):
    md, sets, machines = _pool(version, old=[("a", True, False, T1), ("b", True, False, T2), ("c", True, False, T3)])
    assert ondelete.pool_step(md, sets, machines, max_unavailable=2)["delete"] == ["a", "b"]
    # at least one at a time, whatever is given
    assert ondelete.pool_step(md, sets, machines, max_unavailable=0)["delete"] == ["a"]


@pytest.mark.parametrize("version", objs.VERSIONS)
def test_an_old_machine_that_is_not_ready_costs_no_availability_and_goes_first(version):
    md, sets, machines = _pool(version, old=[("a", True, False, T1), ("b", False, False, T2), ("c", True, False, T3)])
    step = ondelete.pool_step(md, sets, machines, max_unavailable=1)
    assert step["delete"] == ["b"]
    md, sets, machines = _pool(version, old=[("a", True, False, T1), ("b", False, False, T2)], new=[("n", True, False, T3)])
    assert ondelete.pool_step(md, sets, machines, max_unavailable=1)["delete"] == ["b"]


@pytest.mark.parametrize("version", objs.VERSIONS)
def test_done_only_when_every_machine_is_new_ready_and_none_is_deleting(version):
    new = [("n1", True, False, T1), ("n2", True, False, T2), ("n3", True, False, T3)]
    md, sets, machines = _pool(version, new=new)
    step = ondelete.pool_step(md, sets, machines)
    assert step["done"] and step["delete"] == [] and step["message"] == "all 3 Machine(s) on the new template and ready"
    for other in ([("o", True, True, T4)], [], None):
        if other is None:  # a replacement not yet ready
            md, sets, machines = _pool(version, new=new[:2] + [("n3", False, False, T3)])
        else:  # an old Machine still being deleted, or one replacement missing
            md, sets, machines = _pool(version, old=other, new=new if other else new[:2])
        assert not ondelete.pool_step(md, sets, machines)["done"], other


def test_machines_of_other_machine_deployments_are_left_alone():
    md, sets, machines = _pool("v1beta2", old=[("a", True, False, T1)], replicas=1)
    # another pool of the namespace, with its MachineSet in the same list
    stranger = objs.machine("v1beta2", name="x", ms_name="md-1-abcde", md_name="md-1")
    other_set = objs.machine_set("v1beta2", md_name="md-1", suffix="abcde", infra="md-1-infra-v1")
    step = ondelete.pool_step(md, sets + [other_set], machines + [stranger])
    assert step["delete"] == ["a"] and step["old"] == ["a"]


@pytest.mark.parametrize("version", objs.VERSIONS)
def test_is_on_delete(version):
    assert ondelete.is_on_delete(_on_delete_md(version))
    assert not ondelete.is_on_delete(objs.machine_deployment(version))


@pytest.mark.parametrize("version", objs.VERSIONS)
def test_after_a_restart_the_machines_of_the_machine_set_older_than_rollout_after_are_old(version):
    md, sets, machines = _pool(version, old=[("a", True, False, T1)], new=[("n", True, False, T3)], replicas=2)
    for ms in sets:  # a restart: one template, the new MachineSet made after rolloutAfter
        ms["spec"]["template"]["spec"]["infrastructureRef"] = dict(md["spec"]["template"]["spec"]["infrastructureRef"])
    sets[0]["metadata"]["creationTimestamp"], sets[1]["metadata"]["creationTimestamp"] = T1, T3
    md = objs.set_rollout_after(md, T2)
    step = ondelete.pool_step(md, sets, machines, now=objs.NOW)
    assert step["old"] == ["a"] and step["delete"] == ["a"]
