# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Markdown fleet report (GitHub-flavoured tables; every user-supplied string escaped)."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.capi.rollout.plugins.module_utils.report.fmt import (
    ARROW,
    DASH,
    clock,
    duration,
    md,
    seconds_between,
    timestamp,
)
from ansible_collections.capi.rollout.plugins.module_utils.report.model import (
    FAILURES,
    NormalizedReport,
    action_text,
    attention,
    cluster_reason,
    cluster_sentence_parts,
    cluster_stats,
    normalize,
    not_started,
    object_label,
    object_location,
    object_name,
    object_outcome,
    result_label,
    soak_seconds,
    summarize,
    wave_label,
)

ICONS = {
    "succeeded": "\u2705",
    "failed": "\u274c",
    "partial": "\u26a0\ufe0f",
    "stopped_window": "\u23f0",
    "running": "\U0001f504",
    "pending": "\u23f3",
    "planned": "\U0001f4dd",
    "skipped": "\u23ed\ufe0f",
    "undone": "\u21a9\ufe0f",
    "deleted": "\U0001f5d1\ufe0f",
    "blocked": "\u26d4",
}


def status(result, text=None):
    """``❌ failed``: icon plus words, so the table reads without colour."""
    icon = ICONS.get(result)
    label = md(text or result_label(result))
    return "%s %s" % (icon, label) if icon else label


def _row(cells):
    return "| " + " | ".join(cell if cell else " " for cell in cells) + " |"


def _table(header, rows, right=()):
    out = [_row(header), "|" + "|".join("---:" if i in right else "---" for i in range(len(header))) + "|"]
    out.extend(_row(r) for r in rows)
    return out


def _template(obj):
    before, after = obj["before"], obj["after"]
    bname, aname = before["name"], after["name"]
    if bname and aname and bname != aname:
        text = "%s %s **%s**" % (md(bname), ARROW, md(aname))
    elif aname or bname:
        text = md(aname or bname) + (" (unchanged)" if bname and aname else "")
    else:
        text = DASH
    if before["version"] and after["version"] and before["version"] != after["version"]:
        text += "<br>%s %s **%s**" % (md(before["version"]), ARROW, md(after["version"]))
    elif before["version"] or after["version"]:
        text += "<br>%s" % md(after["version"] or before["version"])
    return text


def _notes(obj):
    notes = []
    if obj["failure_reason"]:
        notes.append(("**%s**" if obj["result"] in FAILURES else "%s") % md(obj["failure_reason"]))
    for stuck in obj["stuck_machines"]:
        notes.append("stuck: %s%s%s" % (
            md(stuck["name"] or DASH), " on node %s" % md(stuck["node"]) if stuck["node"] else "",
            ": " + md(stuck["reason"]) if stuck["reason"] else ""))
    for drained in obj["drain_timeouts"]:
        notes.append("**drain timed out**: %s%s" % (md(drained["name"] or DASH), " on node %s" % md(drained["node"]) if drained["node"] else ""))
    undo = obj["undo"]
    if undo and undo["state"] == "failed":
        notes.append("**undo failed**: %s" % md(undo["failure_reason"] or "no reason recorded"))
    elif undo and undo["state"] in ("undone", "undoing"):
        notes.append("undone%s in %s" % (" to " + md(obj["before"]["name"]) if obj["before"]["name"] else "",
                                         duration(seconds_between(undo["started"], undo["finished"]))))
    if obj["next_step"]:
        notes.append("next step: %s" % md(obj["next_step"]))
    for blocker in obj["blockers"]:
        notes.append("blocked: %s" % md(blocker))
    return "<br>".join(notes)


def _objects_table(cluster, day):
    rows = []
    for obj in cluster["objects"]:
        rows.append([
            md(object_label(obj)), md(obj["cluster"] or DASH), md(wave_label(cluster, obj["wave"])),
            str(obj["replicas"]) if obj["replicas"] is not None else DASH,
            _template(obj), ", ".join(status(result, label) for result, label in object_outcome(obj)), clock(obj["started"], day),
            duration(seconds_between(obj["started"], obj["finished"])), duration(soak_seconds(cluster, obj)), _notes(obj),
        ])
    return _table(["Object", "Workload cluster", "Wave", "Replicas", "Template before %s after" % ARROW, "Result",
                   "Started", "Rollout", "Soak", "Reason / notes"], rows, right=(3, 6, 7, 8))


def _waves_table(cluster, day):
    rows = []
    for wave in cluster["waves"]:
        names = ", ".join(md(object_label(o)) for o in wave["objects"]) or DASH
        rows.append([
            md(wave_label(cluster, wave["index"])), names,
            clock(wave["started"], day),
            duration(seconds_between(wave["started"], wave["rollout_finished"])),
            duration(seconds_between(wave["rollout_finished"], wave["soak_finished"])),
            status(wave["result"]) if wave["result"] else DASH,
        ])
    return _table(["Wave", "Objects", "Started", "Rollout", "Soak", "Result"], rows, right=(2, 3, 4))


def _plan_table(cluster):
    rows = []
    for obj in cluster["objects"]:
        blockers = "<br>".join("%s %s" % (ICONS["blocked"], md(b)) for b in obj["blockers"])
        if not blockers and obj["action"] in ("switch", "plan", "undo"):
            blockers = "none"
        action = md(action_text(obj))
        if obj["failure_reason"]:
            action += "<br>" + md(obj["failure_reason"])
        rows.append([
            md(obj["cluster"] or DASH), md(object_label(obj)), str(obj["replicas"]) if obj["replicas"] is not None else DASH,
            _template(obj), action, md(wave_label(cluster, obj["wave"])), blockers,
        ])
    return _table(["Workload cluster", "Object", "Replicas", "Current template %s target template" % ARROW, "Action",
                   "Wave", "Blockers"], rows, right=(2,))


def _sentence(cluster, mode):
    return ", ".join(("**%s**" % md(text)) if tone else md(text) for text, tone in cluster_sentence_parts(cluster, mode)) + "."


def _attention(report):
    out = []
    for cluster in report["management_clusters"]:
        needs = attention(cluster)
        if needs["show_cluster"]:
            out.append("### %s %s: %s" % (ICONS.get(cluster["result"], ""), md(cluster["name"]), md(result_label(cluster["result"]))))
            out.append("")
            if cluster["failure_reason"]:
                out.append("- **Reason:** %s" % md(cluster["failure_reason"]))
            pending = not_started(cluster)
            if pending:
                out.append("- **Not started:** %s" % ", ".join(md(object_label(o)) for o in pending))
            if cluster["next_step"]:
                out.append("- **Next step:** %s" % md(cluster["next_step"]))
            out.append("")
        for failure in needs["failures"]:
            obj = failure["object"]
            location = object_location(cluster, obj)
            out.append("### %s %s \u203a %s %s%s" % (
                ICONS["deleted" if obj["result"] == "deleted" else "failed"], md(cluster["name"]), md(obj["kind"]),
                md(object_name(obj)),
                " (%s)" % md(location) if location else ""))
            out.append("")
            out.append("- **Reason:** %s" % md(obj["failure_reason"]))
            for stuck in obj["stuck_machines"]:
                out.append("- **Stuck:** machine %s%s%s" % (
                    md(stuck["name"] or DASH), " (node %s)" % md(stuck["node"]) if stuck["node"] else " (no node yet)",
                    ": " + md(stuck["reason"]) if stuck["reason"] else ""))
            undo = obj["undo"]
            if undo and undo["state"] == "failed":
                out.append("- **Undo failed:** %s" % md(undo["failure_reason"] or "no reason recorded"))
            elif undo and undo["state"] in ("undone", "undoing"):
                out.append("- **Undone:** switched back to %s in %s%s" % (
                    md(obj["before"]["name"] or "the previous template"),
                    duration(seconds_between(undo["started"], undo["finished"])),
                    "; also undone: " + ", ".join(md(object_label(o)) for o in failure["also_undone"])
                    if failure["also_undone"] else ""))
            if failure["next_step"]:
                out.append("- **Next step:** %s" % md(failure["next_step"]))
            out.append("")
        for obj in needs["blocked"]:
            out.append("### %s %s \u203a %s %s: blocked" % (ICONS["blocked"], md(cluster["name"]), md(obj["kind"]), md(object_name(obj))))
            out.append("")
            out.extend("- %s" % md(b) for b in obj["blockers"])
            out.append("")
    if not out:
        return []
    return ["## Needs attention", ""] + out


def _counts_line(report, summary):
    mcs, mds, cps = summary["management_clusters"], summary["machine_deployments"], summary["control_planes"]
    if report["mode"] == "check":
        return ("**Management clusters:** %d \u00b7 **MachineDeployments to switch:** %d of %d \u00b7 "
                "**Control planes to switch:** %d of %d \u00b7 **Machines to replace:** %d \u00b7 **Blocked:** %d" % (
                    mcs["total"], mds["planned"], mds["total"], cps["planned"], cps["total"],
                    summary["machines_to_replace"], summary["objects"]["blocked"]))

    def extra(counts):
        bits = []
        for key, text in (("failed", "failed"), ("deleted", "deleted"), ("reverted", "undone"), ("pending", "not started"),
                          ("unchanged", "already on target"), ("skipped", "skipped"), ("running", "running")):
            if counts[key]:
                bits.append("%d %s" % (counts[key], text))
        return " (%s)" % ", ".join(bits) if bits else ""

    cbits = []
    for key, text in (("failed", "failed"), ("stopped_window", "stopped at window end"), ("partial", "partial"),
                      ("skipped", "skipped"), ("running", "running")):
        if mcs.get(key):
            cbits.append("%d %s" % (mcs[key], text))
    return ("**Management clusters:** %d of %d ok%s \u00b7 **MachineDeployments:** %d of %d switched%s \u00b7 "
            "**Control planes:** %d of %d switched%s \u00b7 **Machines replaced:** %d%s" % (
                mcs["succeeded"], mcs["total"], " (%s)" % ", ".join(cbits) if cbits else "",
                mds["switched"], mds["total"], extra(mds), cps["switched"], cps["total"], extra(cps),
                summary["machines_replaced"],
                " \u00b7 **Machines updated in place:** %d" % summary["machines_updated_in_place"]
                if summary["machines_updated_in_place"] else ""))


def render_markdown(raw):
    """The Markdown document for a report (raw or normalised)."""
    report = raw if isinstance(raw, NormalizedReport) else normalize(raw)
    summary = summarize(report)
    check = report["mode"] == "check"
    heading = "Plan for hardware refresh" if check else "Hardware refresh"
    badge = status("planned", "dry run") if check else status(report["result"])
    if check and summary["objects"]["blocked"]:
        badge += ", %s" % status("blocked", "%d blocked" % summary["objects"]["blocked"])
    out = ["# %s %s: %s" % (heading, md(report["refresh_id"] or "(no refresh id)"), badge), ""]
    facts = [["Mode", "check mode (dry run, nothing changed)" if check else "apply"]]
    if report["started"]:
        facts.append(["Started", timestamp(report["started"])])
    if report["finished"]:
        facts.append(["Finished", timestamp(report["finished"])])
    if report["duration_seconds"] is not None:
        facts.append(["Duration", duration(report["duration_seconds"])])
    window = report["window"]
    if window and (window["start"] or window["end"]):
        facts.append(["Maintenance window", "%s %s %s" % (timestamp(window["start"]), ARROW, timestamp(window["end"]))])
    if report["run_by"]:
        facts.append(["Run by", md(report["run_by"])])
    out.extend(_table(["", ""], facts))
    out.extend(["", _counts_line(report, summary), ""])
    out.extend(_attention(report))
    clusters = report["management_clusters"]
    if not clusters:
        out.extend(["_No management clusters in this report._", ""])
    if clusters and not check:
        rows = []
        for cluster in clusters:
            stats = cluster_stats(cluster)
            rows.append([
                md(cluster["name"]), md(cluster["capi_version"] or DASH), status(cluster["result"]),
                "%d / %d" % (stats["waves_done"], stats["waves_total"]), "%d / %d" % (stats["switched"], stats["total"]),
                str(stats["failed"]), str(stats["reverted"]), duration(cluster["duration_seconds"]), md(cluster_reason(cluster)),
            ])
        out.extend(["## Management clusters", ""])
        out.extend(_table(["Management cluster", "CAPI", "Result", "Waves", "Switched", "Failed", "Undone", "Duration",
                           "Reason"], rows, right=(3, 4, 5, 6, 7)))
        out.append("")
    for cluster in clusters:
        day = cluster["started"].date() if cluster["started"] else None
        out.extend(["## %s: %s" % (md(cluster["name"]), status(cluster["result"])), ""])
        facts = []
        if cluster["capi_version"] or cluster["api_version"]:
            facts.append("CAPI %s%s" % (md(cluster["capi_version"] or "?"),
                                        " (%s)" % md(cluster["api_version"]) if cluster["api_version"] else ""))
        if cluster["started"]:
            facts.append("%s %s %s UTC" % (clock(cluster["started"], day), ARROW,
                                           clock(cluster["finished"], day) if cluster["finished"] else "\u2026"))
        if cluster["duration_seconds"] is not None:
            facts.append("took %s" % duration(cluster["duration_seconds"]))
        lock = cluster["lock"]
        if lock and lock["holder"]:
            facts.append("lock %s%s" % (md(lock["holder"]), " (%s %s %s)" % (
                clock(lock["acquired"], day), ARROW, clock(lock["released"], day) if lock["released"] else "still held")
                if lock["acquired"] else ""))
        if facts:
            out.extend([" \u00b7 ".join(facts), ""])
        out.extend([_sentence(cluster, report["mode"]), ""])
        if cluster["failure_reason"]:
            out.extend(["> **%s:** %s" % ("Failed" if cluster["result"] == "failed" else "Reason", md(cluster["failure_reason"])), ""])
        if cluster["next_step"]:
            out.extend(["> **Next step:** %s" % md(cluster["next_step"]), ""])
        for note in cluster["notes"]:
            out.append("- %s" % md(note))
        if cluster["notes"]:
            out.append("")
        if not cluster["objects"]:
            out.extend(["_No MachineDeployments or control planes selected._", ""])
            continue
        if check:
            out.extend(_plan_table(cluster))
            out.append("")
            continue
        if cluster["waves"]:
            out.extend(["**Waves**", ""])
            out.extend(_waves_table(cluster, day))
            out.append("")
        out.extend(["**Objects**", ""])
        out.extend(_objects_table(cluster, day))
        out.append("")
    out.append("_Generated by capi.rollout, report format %d; times in UTC._" % report["report_version"])
    return "\n".join(out) + "\n"
