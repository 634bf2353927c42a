# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Planning a hardware refresh of one management cluster, from what capi_rollout_info read.

- ``select_objects``: which MachineDeployments and control planes the refresh covers;
- ``plan``: for each of them the action (switch, unchanged, skip), the blockers that stop it, the
  template before and after, and the waves - all derived from the cluster, never from a local file,
  so a re-run with the same refresh id continues where an earlier run stopped:

  * on its target template and complete: ``unchanged`` (already on target);
  * on its target template, still rolling out, last switched by this refresh id: ``switch`` with
    ``resume`` (the switch is not sent again; the run waits for it);
  * switched back by this refresh's undo (rollout id ``<refresh id>-undo``): ``skip``;
  * everything else that is healthy: ``switch``; anything with a blocker: ``skip``.
- ``waves``: waves of at most ``max_in_flight`` objects, spread over workload clusters, a canary first.

Objects are the entries of capi_rollout_info (``resources``); clone results are those of
capi_machine_template in check mode. The output objects use the fields of the fleet report
(docs/report.md) plus a few the role needs (``ref``, ``target_ref``, ``resume``, ``notes``).
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import copy
import math
import re

from ansible_collections.capi.rollout.plugins.module_utils.core import healthchecks
from ansible_collections.capi.rollout.plugins.module_utils.core import inplace
from ansible_collections.capi.rollout.plugins.module_utils.core import labels_annotations as keys
from ansible_collections.capi.rollout.plugins.module_utils.core import owners
from ansible_collections.capi.rollout.plugins.module_utils.core import refresh_status
from ansible_collections.capi.rollout.plugins.module_utils.core import versionskew

MACHINE_DEPLOYMENT = "MachineDeployment"
KUBEADM_CONTROL_PLANE = "KubeadmControlPlane"

SWITCH = "switch"
UNCHANGED = "unchanged"
SKIP = "skip"


def undo_id(refresh_id):
    """The rollout id the refresh's undo records (so a re-run recognizes what it switched back)."""
    return f"{refresh_id}-undo"


def _get(entry, *path):
    value = entry
    for key in path:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def _matches_name(entry, names):
    return entry.get("name") in names or f"{entry.get('namespace')}/{entry.get('name')}" in names


def select_objects(machine_deployments, control_planes, clusters=None, names=None, control_plane=False, workers=True,
                   narrowed=False):
    """The info entries a refresh covers: control planes first (when ``control_plane``), then MDs.

    ``clusters``: workload cluster names (empty: all). ``names``: MachineDeployment names, or
    ``namespace/name`` (empty: all of the selected clusters). Control planes belong to the selected
    clusters: those named, else - when MDs were narrowed by name or label selector (``narrowed``) -
    the clusters of the selected MDs, else all.
    """
    clusters = set(clusters or [])
    names = set(names or [])
    mds = [md for md in machine_deployments or []
           if (not clusters or md.get("cluster") in clusters) and (not names or _matches_name(md, names))]
    out = []
    if control_plane:
        if clusters:
            wanted = clusters
        elif names or narrowed:
            wanted = set(md.get("cluster") for md in mds)
        else:
            wanted = None
        out.extend(cp for cp in control_planes or [] if wanted is None or cp.get("cluster") in wanted)
    if workers:
        out.extend(mds)
    return out


def _layer(base, extra):
    """``extra`` merged over ``base``: mappings recursively, anything else (None included: it removes the key
    from the template later, see template_clone.deep_merge) replaces."""
    if not isinstance(base, dict) or not isinstance(extra, dict):
        return copy.deepcopy(extra)
    out = copy.deepcopy(base)
    for key, value in extra.items():
        out[key] = _layer(out[key], value) if key in out else copy.deepcopy(value)
    return out


_K8S_VERSION = re.compile(r"(?<![0-9.])v?(1\.[0-9]{1,2}\.[0-9]{1,3})(?![0-9])")


def _versions_in(value):
    if isinstance(value, dict):
        return [found for item in value.values() for found in _versions_in(item)]
    if isinstance(value, (list, tuple)):
        return [found for item in value for found in _versions_in(item)]
    return _K8S_VERSION.findall(value) if isinstance(value, str) else []


def clone_settings(entry, overrides=None, labels=None, annotations=None, object_templates=None):
    """What the new template of ``entry`` (an info entry) is made with: {overrides, labels, annotations, warnings}.

    The global ``overrides``/``labels``/``annotations``, then ``object_templates`` entries (each {overrides,
    labels, annotations}) of its workload cluster (key ``cluster:<name>``), of its name and of
    ``namespace/name``, each merged over the one before - a pool, or a workload cluster on another
    Kubernetes version, gets its own image. ``warnings``: an override naming a Kubernetes version
    (``kindest/node:v1.31.0``, an AMI name) other than the object's ``spec.version``.
    """
    templates = object_templates or {}
    out = {"overrides": _layer({}, overrides or {}), "labels": dict(labels or {}), "annotations": dict(annotations or {})}
    for key in (f"cluster:{entry.get('cluster')}", entry.get("name"), f"{entry.get('namespace')}/{entry.get('name')}"):
        extra = templates.get(key) or {}
        out["overrides"] = _layer(out["overrides"], extra.get("overrides") or {})
        out["labels"].update(extra.get("labels") or {})
        out["annotations"].update(extra.get("annotations") or {})
    version = str(_get(entry, "template", "version") or "").lstrip("v")
    named = sorted(set(_versions_in(out["overrides"])))
    out["warnings"] = []
    if version and named and version not in named:
        out["warnings"].append(f"the overrides name Kubernetes {', '.join('v' + v for v in named)} but {entry.get('ref')} "
                               f"runs v{version} (spec.version): check the image, or give this pool or workload cluster "
                               "its own overrides (object_templates)")
    return out


def with_clone_settings(entries, templates):
    """``entries`` each with ``clone``: its template settings (clone_settings) from the role's ``templates``
    ({overrides, labels, annotations, objects})."""
    templates = templates or {}
    return [dict(entry, clone=clone_settings(entry, templates.get("overrides"), templates.get("labels"),
                                             templates.get("annotations"), templates.get("objects")))
            for entry in entries]


def wave_size(max_in_flight, total):
    """Objects per wave for ``max_in_flight`` (int, digit string or "N%" of ``total``); ValueError if invalid."""
    text = str(max_in_flight).strip() if max_in_flight is not None else "1"
    if isinstance(max_in_flight, bool):
        raise ValueError(f"max_in_flight must be a number >= 1 or a percentage such as '25%', got {max_in_flight!r}")
    try:
        if text.endswith("%"):
            percent = float(text[:-1])
            if percent <= 0:
                raise ValueError(text)
            return max(1, int(math.ceil(total * percent / 100.0)))
        size = int(text)
    except ValueError:
        raise ValueError(f"max_in_flight must be a number >= 1 or a percentage such as '25%', got {max_in_flight!r}")
    if size < 1:
        raise ValueError(f"max_in_flight must be at least 1, got {max_in_flight!r}")
    return size


def interleave(objects):
    """The objects taken from each workload cluster in turn (clusters in order of first appearance)."""
    groups = {}
    order = []
    for obj in objects:
        key = (obj.get("namespace"), obj.get("cluster"))
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append(obj)
    out = []
    depth = max([len(items) for items in groups.values()] or [0])
    for level in range(depth):
        for key in order:
            if level < len(groups[key]):
                out.append(groups[key][level])
    return out


def waves(objects, max_in_flight=1, canary=False, name="wave", start=0):
    """[{index, name, objects}]: at most ``max_in_flight`` objects per wave, one canary first when asked."""
    ordered = interleave(list(objects))
    size = wave_size(max_in_flight, len(ordered))
    out = []
    rest = ordered
    index = int(start or 0)
    if canary and rest:
        out.append({"index": index, "name": "canary", "objects": rest[:1]})
        rest = rest[1:]
        index += 1
    number = 1
    while rest:
        out.append({"index": index, "name": f"{name}-{number}", "objects": rest[:size]})
        rest = rest[size:]
        index += 1
        number += 1
    return out


def clone_outcomes(results):
    """{ref: {ok, msg, infrastructure_ref, template}} from the ``results`` of capi_machine_template: one call with
    ``objects`` (each result names its object in ``ref``), or a task looped over the objects (``item`` is the
    object, with its ``ref``)."""
    out = {}
    for result in results or []:
        if not isinstance(result, dict):
            continue
        ref = result_ref(result)
        if not ref:
            continue
        out[ref] = {"ok": not result.get("failed") and bool(result.get("infrastructure_ref")), "msg": result.get("msg"),
                    "infrastructure_ref": result.get("infrastructure_ref"), "template": result.get("template")}
    return out


def result_ref(result):
    """The object a capi_machine_template result is about: ``ref`` of a call with ``objects``, or the ``ref`` of
    the loop item of a looped task."""
    item = result.get("item")
    return result.get("ref") or (item.get("ref") if isinstance(item, dict) else None)


def _template_settings(obj):
    """The settings of the target template of ``obj`` (its ``clone`` settings, see clone_settings)."""
    settings = obj.get("clone") or {}
    return {"overrides": settings.get("overrides") or {}, "labels": settings.get("labels") or {},
            "annotations": settings.get("annotations") or {}}


def clone_requests(objects):
    """The ``objects`` option of one capi_machine_template call that clones the target templates of ``objects``
    (plan objects or selected entries, each with its ``clone`` settings, see clone_settings)."""
    return [dict(_template_settings(obj), kind=obj.get("kind"), namespace=obj.get("namespace"), name=obj.get("name"))
            for obj in objects or []]


def switch_calls(objects, restart=False):
    """The capi_rollout_restart calls that switch (or, with ``restart``, restart) ``objects`` (plan objects of one
    wave; resumed ones are switched already and left out): one call per kind and namespace, each object with the
    ``template`` the call makes for it and switches it to (its ``clone`` settings). Each call has ``kind``,
    ``namespace``, ``refs`` and either ``names`` (restart) or ``switches``."""
    calls = {}
    for obj in objects or []:
        if obj.get("resume"):
            continue
        call = calls.setdefault((obj.get("kind"), obj.get("namespace")),
                                {"kind": obj.get("kind"), "namespace": obj.get("namespace"), "refs": []})
        call["refs"].append(obj.get("ref"))
        if restart:
            call.setdefault("names", []).append(obj.get("name"))
        else:
            call.setdefault("switches", []).append({"name": obj.get("name"), "template": _template_settings(obj)})
    return list(calls.values())


def undo_calls(objects):
    """The capi_rollout_undo calls of the automatic undo of a failed wave (``objects``: the plan objects it switches
    back): one per object, and one for the objects of one ``unit`` (the MDs of a Cluster rebased onto a ClusterClass
    clone, plan_waves). Their undo is one rebase of the Cluster back, which one call sends once and records on each
    of them (flows.change); a call per object would find the Cluster back already and leave the others unrecorded.
    Not one call for all: a call refuses every object when one is refused (changed since), and the others should still
    be switched back. Each call has ``kind``, ``namespace``, ``names`` and ``refs``."""
    calls, by_unit = [], {}
    for obj in objects or []:
        call = by_unit.get(obj.get("unit")) if obj.get("unit") is not None else None
        if call is None:
            call = {"kind": obj.get("kind"), "namespace": obj.get("namespace"), "names": [], "refs": []}
            calls.append(call)
            if obj.get("unit") is not None:
                by_unit[obj["unit"]] = call
        call["names"].append(obj.get("name"))
        call["refs"].append(obj.get("ref"))
    return calls


def _template(entry):
    infra_ref = _get(entry, "template", "infrastructure_ref") or {}
    return {"infrastructure_ref": {"kind": infra_ref.get("kind"), "name": infra_ref.get("name")}, "version": _get(entry, "template", "version")}


def _original_name(clone):
    """The template a clone was made from (its cloned-from annotation), or None."""
    annotations = _get(clone, "template", "metadata", "annotations") or {}
    value = annotations.get(keys.CLONED_FROM_ANNOTATION) or ""
    return value.split("/", 1)[1] if "/" in value else (value or None)


def _control_plane_versions(control_planes):
    out = {}
    for cp in control_planes or []:
        out[(cp.get("namespace"), cp.get("cluster"))] = _get(cp, "template", "version")
    return out


def _blockers(entry, clone, on_target, ours, cp_versions, restart=False, on_delete="skip"):
    blockers = []
    kind = entry.get("kind")
    for reason in entry.get("paused_reasons") or ([] if not entry.get("paused") else ["paused"]):
        blockers.append(f"paused: {reason}")
    if entry.get("topology_owned") and not restart and "topology" not in clone:
        # no Cluster topology path was planned for it (the label without a Cluster topology, or no such ClusterClass)
        blockers.append("managed by a Cluster topology (ClusterClass): change the template in the Cluster topology or "
                        "ClusterClass instead")
    elif not clone.get("ok"):
        blockers.append(f"target template: {clone.get('msg') or 'could not be planned'}")
    strategy = _get(entry, "rollout", "strategy", "type")
    if strategy == "OnDelete" and on_delete != "replace":
        blockers.append("strategy OnDelete: switching the template replaces no Machine until someone deletes them; "
                        "roll it by hand, or refresh with on_delete=replace (the run deletes them at a controlled pace)")
    if _get(entry, "rollout", "pending"):
        blockers.append(f"a rollout is already scheduled for {_get(entry, 'rollout', 'after')}")
    if not _get(entry, "rollout", "complete") and not (on_target and ours) and \
            _get(entry, "rollout", "waiting_for") != "pending":
        blockers.append(f"not healthy or already rolling out: {_get(entry, 'rollout', 'message')}")
    if kind == MACHINE_DEPLOYMENT:
        cp_version = cp_versions.get((entry.get("namespace"), entry.get("cluster")))
        kubeadm = (_get(entry, "template", "bootstrap_ref", "kind") or "") == "KubeadmConfigTemplate"
        for problem in versionskew.skew_problems(_get(entry, "template", "version"), cp_version, kubeadm=kubeadm):
            blockers.append(f"version skew: {problem}")
    return blockers


def plan(candidates, clones, control_planes=None, refresh_id=None, mode="apply", restart=False, field_owners="refuse",
         on_delete="skip", in_place=None):
    """Report objects for ``candidates`` (info entries) given ``clones`` ({ref: {ok, msg, infrastructure_ref,
    template}} from capi_machine_template in check mode) and every control plane (for the version skew).

    ``restart``: a plain restart (rotate the Machines onto their current template): no clones are needed,
    the target is the current template, and an object counts as done once this refresh id restarted it.
    ``field_owners``: what a field the switch (or restart) writes that another manager owns means (core.owners:
    refuse: a blocker, warn: a note, ignore: nothing). ``on_delete``: an OnDelete pool is a blocker (skip) or switched
    and its old Machines deleted by the wave's wait (replace, core.ondelete). ``in_place``: what the switches do with
    the Machines on this management cluster (core.inplace.mode: None, "replace", "allow").

    Each object has the report fields (kind, namespace, name, cluster, replicas, before, after, action,
    result, blockers, started) plus ``ref``, ``target_ref`` (for capi_rollout_restart), ``wait`` (the
    capi_rollout_wait object: the target template it must stay on, none for a restart), ``resume``,
    ``notes`` and ``in_place`` (a switch's, plain or through a Cluster topology alike, with its note
    core.inplace.outlook; None for a restart, which replaces every Machine).
    """
    check = mode == "check"
    cp_versions = _control_plane_versions(control_planes)
    out = []
    for entry in candidates or []:
        ref = entry.get("ref")
        last = entry.get("last_rollout") or {}
        ours = bool(refresh_id) and last.get("id") == refresh_id
        before = _template(entry)
        current = before["infrastructure_ref"]
        if restart:
            clone = {"ok": True, "infrastructure_ref": dict(current)}
        else:
            clone = clones.get(ref) or {"ok": False, "msg": "no target template was planned"}
        target = clone.get("infrastructure_ref") if clone.get("ok") else None
        # new hardware through the Cluster topology (core.topology.refresh_outcome): no template of ours to name
        topo = None if restart else clone.get("topology")
        if restart:
            on_target = ours
        elif topo:
            on_target = topo["held"]
        else:
            on_target = bool(target) and target.get("name") == current.get("name") and target.get("kind") == current.get("kind")
        after = {"infrastructure_ref": {"kind": target.get("kind"), "name": target.get("name")} if target else None,
                 "version": before["version"]}
        if on_target and not restart:
            original = _original_name(clone)
            if original:
                before = {"infrastructure_ref": {"kind": current.get("kind"), "name": original}, "version": before["version"]}
        obj = {"kind": entry.get("kind"), "namespace": entry.get("namespace"), "name": entry.get("name"),
               "cluster": entry.get("cluster"), "replicas": _get(entry, "replicas", "desired"), "ref": ref,
               "before": before, "after": after, "target_ref": target, "resume": False, "notes": [],
               "wait": {"kind": entry.get("kind"), "namespace": entry.get("namespace"), "name": entry.get("name"),
                        "infrastructure_ref": None if restart or not target else
                        {"kind": target.get("kind"), "name": target.get("name")}},
               "blockers": [], "started": None, "wave": None, "restart": bool(restart),
               "clone": entry.get("clone"), "health": entry.get("health"), "in_place": None if restart else in_place}
        if topo:
            obj["wait"] = {key: value for key, value in obj["wait"].items() if key != "infrastructure_ref"}
            obj["wait"]["topology"] = topo["hold"]
            obj["notes"].append(f"through its Cluster topology ({topo['path']}): {topo['change']}; {topo['why']}")
            if topo.get("unchecked"):
                obj["notes"].append(topo["unchecked"])
            if topo["hold"].get("cluster_class"):
                # a rebase rolls every MD of that worker class of the Cluster at once: one unit in one wave (plan_waves)
                obj["unit"] = f"cluster/{entry.get('namespace')}/{entry.get('cluster')} onto {topo['hold']['cluster_class']}"
        if refresh_id and last.get("id") == undo_id(refresh_id):
            obj.update(action=SKIP, result="skipped",
                       notes=[f"switched back by the undo of refresh {refresh_id} at {last.get('at')}; start a new "
                              "refresh id to roll it again"])
            out.append(obj)
            continue
        if not restart:
            obj["notes"].extend((entry.get("clone") or {}).get("warnings") or [])
        blockers = _blockers(entry, clone, on_target, ours, cp_versions, restart=restart, on_delete=on_delete)
        owned, owned_note = owners.plan_blocker(entry.get("field_owners"), restart, field_owners)
        if owned and not on_target:
            blockers.append(owned)
        if owned_note and not on_target:
            obj["notes"].append(owned_note)
        # a MachineHealthCheck replacing one of its Machines: not while it remediates (core/healthchecks.py)
        remediating = healthchecks.blocker(entry.get("health"))
        if remediating and not on_target:
            blockers.append(remediating)
        if blockers:
            obj.update(action=SKIP, result="skipped", blockers=blockers)
        elif on_target and _get(entry, "rollout", "complete"):
            obj.update(action=UNCHANGED, result="planned" if check else "succeeded",
                       notes=[f"already restarted by this refresh at {last.get('at')}" if restart
                              else topo["change"] if topo else "already on the target template"])
            if ours:
                obj["started"] = last.get("at")
        elif on_target:
            obj.update(action=SWITCH, result="planned" if check else "pending", resume=True, started=last.get("at"),
                       notes=[f"{'restarted' if restart else 'switched'} by this refresh at {last.get('at')}; its rollout is "
                              "still running, the run waits for it"])
        else:
            obj.update(action=SWITCH, result="planned" if check else "pending")
            if inplace.outlook(obj["in_place"]):
                obj["notes"].append(inplace.outlook(obj["in_place"]))
            if ours and not restart:
                # Drift: a record of this refresh on an object that is not on its target (a hand edit, or a
                # rerun with other overrides) is switched again, never skipped as done.
                obj["notes"].append(f"switched by this refresh at {last.get('at')}, but its template is now "
                                    f"{current.get('kind')} {current.get('name')}: switching again")
        out.append(obj)
    return out


def plan_waves(objects, max_in_flight=1, canary=False):
    """Waves for the objects to switch: control planes first (never a canary), then MachineDeployments.

    Returns the waves ({index, name, kind, objects: [refs]}) and sets ``wave`` (index) and ``wave_name`` on
    the objects (in place). Objects of one ``unit`` (the MDs of a Cluster rebased onto a ClusterClass clone, which
    roll together whatever the waves say) go in one wave and count as one object there (max_in_flight, canary).
    """
    to_switch = [obj for obj in objects if obj.get("action") == SWITCH]
    cps = [obj for obj in to_switch if obj.get("kind") == KUBEADM_CONTROL_PLANE]
    mds = [obj for obj in to_switch if obj.get("kind") != KUBEADM_CONTROL_PLANE]
    out = []
    cp_waves = waves(cps, max_in_flight, canary=False, name="control-plane")
    md_waves = _unit_waves(mds, max_in_flight, canary, start=len(cp_waves))
    for kind, group in ((KUBEADM_CONTROL_PLANE, cp_waves), (MACHINE_DEPLOYMENT, md_waves)):
        for wave in group:
            for obj in wave["objects"]:
                obj["wave"] = wave["index"]
                obj["wave_name"] = wave["name"]
            out.append({"index": wave["index"], "name": wave["name"], "kind": kind,
                        "objects": [obj["ref"] for obj in wave["objects"]]})
    return out


def _unit_waves(objects, max_in_flight, canary, start):
    """waves() over the units of ``objects`` (a unit: the objects of one ``unit`` key, or an object without one), each
    wave then holding every object of its units."""
    units, by_key = [], {}
    for obj in objects:
        if obj.get("unit") not in by_key:
            units.append([obj])
            if obj.get("unit") is not None:
                by_key[obj["unit"]] = units[-1]
        else:
            by_key[obj["unit"]].append(obj)
    members = {id(unit[0]): unit for unit in units}
    return [dict(wave, objects=[obj for first in wave["objects"] for obj in members[id(first)]])
            for wave in waves([unit[0] for unit in units], max_in_flight, canary=canary, name="wave", start=start)]


def refresh_plan(candidates, clones, control_planes=None, refresh_id=None, mode="apply", max_in_flight=1, canary=False,
                 restart=False, field_owners="refuse", on_delete="skip", in_place=None):
    """The plan of one management cluster: {objects (see plan), waves (see plan_waves), blocked (the objects with
    blockers)}. ``clones``: {ref: outcome} (clone_outcomes). ValueError for a bad ``max_in_flight``."""
    objects = plan(list(candidates or []), dict(clones or {}), control_planes=control_planes or [],
                   refresh_id=str(refresh_id), mode=mode, restart=bool(restart), field_owners=field_owners, on_delete=on_delete,
                   in_place=in_place)
    waves = plan_waves(objects, max_in_flight=max_in_flight, canary=bool(canary))
    return {"objects": objects, "waves": waves, "blocked": [obj for obj in objects if obj["blockers"]]}


def stop_after_plan(plan, cluster_blockers, window, refresh_id, on_blocked="skip", check_mode=False,
                    wait_for_window=False, lock_held=False):
    """Whether the refresh of a management cluster stops once it is planned, and what it reports then.

    ``plan``: the output of refresh_plan ({objects, waves, blocked}); ``cluster_blockers``: what
    stops the whole management cluster (an old CAPI, templates that could not be planned); ``window``: the
    rollout_window filter's output. In check mode only the blockers count: the window is shown, not enforced, since a
    dry run is usually made before the window opens. Returns {stop, status, notes}: ``status`` is the cluster's
    {result, failure_reason, next_step} when it stops for a reason (None otherwise; also when a real run has nothing
    to switch), ``notes`` what to add to its notes.
    """
    def stopped(result, failure_reason, next_step, notes=()):
        return {"stop": True, "status": refresh_status.status(result, failure_reason, next_step), "notes": list(notes)}

    if cluster_blockers:
        return stopped("failed", f"preflight: {'; '.join(cluster_blockers)}; nothing was changed",
                       "Fix what is named above (an older Cluster API: upgrade it), or leave this management cluster "
                       "out of the refresh.", cluster_blockers)
    blocked = plan.get("blocked") or []
    if check_mode and lock_held and blocked:
        # another run holds the lock and changes the cluster now: its rollouts show as "already rolling out"; a real
        # run would wait for the lock and plan again, so the check run shows the blockers without failing on them
        return {"stop": False, "status": None,
                "notes": [f"{len(blocked)} object(s) blocked now, while another run holds the lock; a real run plans again "
                          "once it holds it"]}
    if on_blocked == "fail" and blocked:
        which = " | ".join(f"{obj['ref']}: {'; '.join(obj['blockers'])}" for obj in blocked)
        return stopped("failed", f"preflight: {len(blocked)} object(s) blocked: {which}; nothing was changed",
                       "Fix the blockers (or narrow the selection), or set on_blocked=skip (hardware_refresh_on_blocked) to "
                       f"refresh the other objects; then {refresh_status.rerun(refresh_id)}.")
    if check_mode:
        return {"stop": False, "status": None, "notes": []}
    if not plan.get("waves"):
        return {"stop": True, "status": None, "notes": []}
    if window.get("state") == "closed":
        return {"stop": True, "status": refresh_status.window_closed(window.get("not_after"), refresh_id), "notes": []}
    if window.get("state") == "not_open_yet" and not wait_for_window:
        return stopped("skipped", f"the maintenance window opens at {window.get('not_before')}; no wave was started",
                       "Run it again once the window is open, or set hardware_refresh_wait_for_window.")
    return {"stop": False, "status": None, "notes": []}


def failure_budget(results, budget_percent, hosts, failed_hosts=()):
    """Whether the failure budget of a run (playbooks/hardware_refresh.yml: ``failure_budget_percent``, over the
    batches of ``batch_size`` management clusters) is spent once the batches so far have run.

    ``results``: the management clusters' results (hardware_refresh_result, named by ``name``) of every batch so far;
    ``hosts``: every management cluster of the run, in order; ``failed_hosts``: those that failed without leaving a
    result. The budget is spent when more than ``budget_percent`` % of the management clusters that ran failed (0: the
    first failure spends it; 100: never spent); the later batches stop then (``stop``: some are left). Returns
    {spent, stop, failed, total, not_started, message}.
    """
    ran = {result.get("name"): result.get("result") for result in results if isinstance(result, dict)}
    ran.update((host, "failed") for host in failed_hosts if host not in ran)
    failed = sorted(host for host, outcome in ran.items() if outcome == "failed")
    total = len(ran)
    spent = bool(failed) and len(failed) * 100 > budget_percent * total
    not_started = [host for host in hosts if host not in ran]
    message = None
    if spent and not_started:
        message = (f"failure budget spent: {len(failed)} of {total} management cluster(s) failed so far "
                   f"({', '.join(failed)}), more than failure_budget_percent={budget_percent}%; the later batches are not "
                   f"started: {', '.join(not_started)}. Fix the failures named in the report, then re-run with the same "
                   "refresh id: it continues where this run stopped.")
    return {"spent": spent, "stop": spent and bool(not_started), "failed": failed, "total": total,
            "not_started": not_started, "message": message}
