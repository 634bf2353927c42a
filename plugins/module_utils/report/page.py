# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The self-contained HTML fleet report: one page, inline CSS and SVG, no scripts, no external assets."""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

from ansible_collections.capi.rollout.plugins.module_utils.report.fmt import (
    ARROW,
    DASH,
    clock,
    duration,
    h,
    seconds_between,
    shorten,
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
    object_bucket,
    object_label,
    object_location,
    object_name,
    object_outcome,
    result_label,
    soak_seconds,
    summarize,
    wave_label,
)
from ansible_collections.capi.rollout.plugins.module_utils.report.timeline import (
    cluster_timeline,
    fleet_timeline,
)

CSS = """
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;background:#f3f5f8;color:#0f172a;font:14px/1.45 -apple-system,BlinkMacSystemFont,"Segoe UI",Roboto,
"Helvetica Neue",Arial,"Liberation Sans","DejaVu Sans",sans-serif}
.wrap{max-width:1320px;margin:0 auto;padding:24px 28px 40px}
h1,h2,h3{margin:0;line-height:1.2}
h2{font-size:17px;margin:0 0 12px}
a{color:#1d4ed8;text-decoration:none}
a:hover{text-decoration:underline}
code,.mono{font-family:"SFMono-Regular",Menlo,Consolas,"Liberation Mono","DejaVu Sans Mono",monospace;font-size:12.5px}
.muted{color:#64748b}
.top{background:#fff;border:1px solid #e2e8f0;border-top:6px solid #94a3b8;border-radius:12px;padding:20px 24px;
box-shadow:0 1px 2px rgba(15,23,42,.05)}
.top.status-succeeded{border-top-color:#16a34a}.top.status-failed{border-top-color:#dc2626}
.top.status-partial,.top.status-stopped_window{border-top-color:#d97706}.top.status-planned{border-top-color:#4f46e5}
.top.status-running{border-top-color:#2563eb}
.title-row{display:flex;justify-content:space-between;align-items:flex-start;gap:24px}
.eyebrow{font-size:12px;text-transform:uppercase;letter-spacing:.08em;color:#64748b;font-weight:600}
h1{font-size:26px;margin:4px 0 6px}
h1 .id{font-family:"SFMono-Regular",Menlo,Consolas,"Liberation Mono","DejaVu Sans Mono",monospace;font-size:24px}
.meta{color:#475569;font-size:13px}
.meta b{color:#0f172a;font-weight:600}
.badge{display:inline-block;border-radius:999px;padding:2px 10px;font-size:12px;font-weight:700;letter-spacing:.02em;
white-space:nowrap;background:#f1f5f9;color:#475569;border:1px solid transparent}
.badge.big{font-size:18px;padding:8px 18px;border-radius:10px;text-transform:uppercase;letter-spacing:.06em}
.status-succeeded.badge,.pill.status-succeeded{background:#dcfce7;color:#166534;border-color:#bbf7d0}
.status-failed.badge,.pill.status-failed,.status-deleted.badge,.pill.status-deleted{background:#fee2e2;color:#991b1b;
border-color:#fecaca}
.status-partial.badge,.status-stopped_window.badge,.pill.status-partial,.pill.status-stopped_window{background:#fef3c7;
color:#92400e;border-color:#fde68a}
.status-running.badge,.pill.status-running{background:#dbeafe;color:#1e40af;border-color:#bfdbfe}
.status-planned.badge,.pill.status-planned{background:#e0e7ff;color:#3730a3;border-color:#c7d2fe}
.status-undone.badge,.pill.status-undone{background:#ffedd5;color:#9a3412;border-color:#fed7aa}
.pill{display:inline-block;border-radius:6px;padding:1px 7px;font-size:11.5px;font-weight:600;background:#f1f5f9;
color:#475569;border:1px solid #e2e8f0;white-space:nowrap}
.tiles{display:grid;grid-template-columns:repeat(5,1fr);gap:12px;margin-top:18px}
.tile{border:1px solid #e2e8f0;border-radius:10px;padding:10px 14px;background:#f8fafc}
.tile .k{font-size:11.5px;text-transform:uppercase;letter-spacing:.06em;color:#64748b;font-weight:600}
.tile .v{font-size:26px;font-weight:700;margin-top:2px;font-variant-numeric:tabular-nums}
.tile .v small{font-size:15px;color:#64748b;font-weight:600}
.tile .s{font-size:12.5px;color:#475569;margin-top:2px}
.tile.bad{background:#fef2f2;border-color:#fecaca}.tile.bad .v{color:#b91c1c}
.tile.warn{background:#fffbeb;border-color:#fde68a}.tile.warn .v{color:#b45309}
.tile.good .v{color:#15803d}
.red{color:#b91c1c;font-weight:600}.amber{color:#b45309;font-weight:600}.orange{color:#c2410c;font-weight:600}
.green{color:#15803d;font-weight:600}
section{margin-top:22px}
.panel{background:#fff;border:1px solid #e2e8f0;border-radius:12px;padding:18px 22px;box-shadow:0 1px 2px rgba(15,23,42,.05)}
.attention{border-left:6px solid #dc2626}
.attention.only-warn{border-left-color:#d97706}
.allgood{border-left:6px solid #16a34a;color:#14532d;background:#f0fdf4}
.issue{padding:12px 0;border-top:1px solid #f1f5f9}
.issue:first-of-type{border-top:0;padding-top:2px}
.issue-head{font-size:14.5px}
.issue-head .obj{font-weight:600}
.reason{margin:6px 0 0;padding:8px 12px;border-radius:8px;background:#fef2f2;color:#7f1d1d;white-space:pre-wrap;
word-break:break-word}
.issue.warn .reason,.cluster-reason.warn{background:#fffbeb;color:#78350f}
.next{margin:8px 0 0;padding:8px 12px;border-radius:8px;background:#eff6ff;color:#1e3a8a;border:1px solid #bfdbfe}
.next b{color:#1e40af}
.stuck{margin:6px 0 0 0;padding-left:20px;color:#334155}
.stuck li{margin:2px 0}
.aside{margin:6px 0 0;color:#475569;font-size:13px}
.legend{display:flex;flex-wrap:wrap;gap:16px;font-size:12px;color:#475569;margin:6px 0 2px}
.legend span{display:inline-flex;align-items:center;gap:6px}
.sw{display:inline-block;width:22px;height:10px;border-radius:2px}
.sw.rollout{background:#3b82f6}
.sw.running{background:repeating-linear-gradient(45deg,#3b82f6 0 3px,#dbeafe 3px 6px)}.sw.soak{background:#bfdbfe}.sw.failed{background:#dc2626}
.sw.undo{background:repeating-linear-gradient(45deg,#ea580c 0 2px,#ffedd5 2px 5px);outline:1px solid #ea580c}
.sw.window{width:0;height:14px;border-left:2px dashed #d97706;border-radius:0}
.sw.wave{width:0;height:14px;border-left:1px dashed #94a3b8;border-radius:0}
table{border-collapse:collapse;width:100%;font-size:13px}
th{text-align:left;font-size:11px;text-transform:uppercase;letter-spacing:.06em;color:#64748b;font-weight:600;
padding:7px 8px;border-bottom:1px solid #e2e8f0;white-space:nowrap}
td{padding:7px 8px;border-bottom:1px solid #f1f5f9;vertical-align:top}
td.num{text-align:right;font-variant-numeric:tabular-nums}
th.num{text-align:right}
tr.is-failed td{background:#fef2f2}
tr.is-failed td:first-child{box-shadow:inset 4px 0 0 #dc2626}
tr.is-undone td:first-child{box-shadow:inset 4px 0 0 #ea580c}
tr.is-blocked td{background:#fffbeb}
tr.is-blocked td:first-child{box-shadow:inset 4px 0 0 #d97706}
.tmpl{font-family:"SFMono-Regular",Menlo,Consolas,"Liberation Mono","DejaVu Sans Mono",monospace;font-size:12px}
.tmpl .arrow{color:#64748b;padding:0 4px;font-family:inherit}
.tmpl .to{color:#0f172a;font-weight:600}
.tmpl .nm{white-space:nowrap}
.objcell,.wavecell{white-space:nowrap}
.objcell .sub{color:#64748b;font-size:11.5px;margin-top:1px;padding-left:2px}
.tmpl .kind{display:block;color:#94a3b8;font-size:11px;font-family:-apple-system,"Segoe UI",Roboto,Arial,sans-serif}
.kind-chip{display:inline-block;font-size:10px;font-weight:700;border-radius:4px;padding:1px 5px;margin-right:6px;
background:#e0f2fe;color:#075985;vertical-align:1px}
.kind-chip.kcp{background:#ede9fe;color:#5b21b6}
.objname{font-weight:600;word-break:break-word}
.note{margin-top:3px;font-size:12.5px}
.note.red{font-weight:400;color:#991b1b}
ul.blockers{margin:0;padding-left:18px;color:#92400e}
.card{background:#fff;border:1px solid #e2e8f0;border-radius:12px;padding:18px 22px 14px;margin-top:18px;
box-shadow:0 1px 2px rgba(15,23,42,.05)}
.card.status-failed{border-left:6px solid #dc2626}
.card.status-stopped_window,.card.status-partial{border-left:6px solid #d97706}
.card.status-succeeded{border-left:6px solid #16a34a}
.card.status-planned{border-left:6px solid #4f46e5}
.card-head{display:flex;justify-content:space-between;gap:16px;align-items:baseline;flex-wrap:wrap}
.card-head h3{font-size:20px}
.card-head h3 .badge{vertical-align:3px;margin-left:8px}
.facts{font-size:12.5px;color:#475569;display:flex;flex-wrap:wrap;gap:4px 16px}
.facts b{color:#0f172a;font-weight:600}
.sentence{margin:8px 0 4px;font-size:14px;color:#1e293b}
.cluster-reason{margin:10px 0 4px;padding:10px 14px;border-radius:8px;background:#fef2f2;color:#7f1d1d;
word-break:break-word}
.cluster-reason .next{margin-top:8px}
.notes{margin:6px 0 0;padding-left:18px;color:#475569;font-size:13px}
svg.timeline{display:block;margin:10px 0 6px;font-family:inherit;overflow:visible}
svg .grid{stroke:#eef2f6;stroke-width:1}
svg .axis{stroke:#cbd5e1;stroke-width:1}
svg .tick{fill:#64748b;font-size:11px}
svg .tick.muted{fill:#94a3b8}
svg .row-name{fill:#0f172a;font-size:13px;font-weight:600}
svg .row-name.strong{font-size:13.5px}
svg .row-sub{fill:#64748b;font-size:10.5px}
svg .chip-md{fill:#e0f2fe}svg .chip-kcp{fill:#ede9fe}
svg .chip-text{fill:#334155;font-size:9.5px;font-weight:700}
svg .wave-title{fill:#475569;font-size:11px;font-weight:700;letter-spacing:.06em}
svg .wave-meta{fill:#64748b;font-size:11px}
svg .wave-span{stroke:#94a3b8;stroke-width:1.2}
svg .wave-band{fill:#f8fafc}
svg .wave-boundary{stroke:#cbd5e1;stroke-width:1;stroke-dasharray:3 3}
svg .bar-rollout{fill:#3b82f6}
svg .bar-soak{fill:#bfdbfe}
svg .bar-failed{fill:#dc2626}
svg .bar-undo{stroke:#ea580c;stroke-width:1}
svg .bar-undo.undo-failed{stroke:#dc2626;stroke-width:2}
svg .hatch-bg{fill:#ffedd5}svg .hatch-fg{stroke:#ea580c;stroke-width:3}
svg .stripe-bg{fill:#dbeafe}svg .stripe-fg{stroke:#3b82f6;stroke-width:4}
svg .wait{stroke:#94a3b8;stroke-width:1.2;stroke-dasharray:2 3}
svg .marker-failed{fill:#dc2626;stroke:#fff;stroke-width:2}
svg .marker-text{fill:#fff;font-size:11px;font-weight:800}
svg .window-end{stroke:#d97706;stroke-width:2;stroke-dasharray:6 4}
svg .window-label{fill:#b45309;font-size:11px;font-weight:700}
svg .bar-label{fill:#334155;font-size:11.5px}
svg .bar-label.failed{fill:#b91c1c;font-weight:700}
svg .bar-label.undone{fill:#c2410c;font-weight:600}
svg .bar-label.muted{fill:#94a3b8;font-style:italic}
svg .status-failed{fill:#b91c1c;font-weight:700}
svg .status-stopped_window,svg .status-partial{fill:#b45309;font-weight:700}
svg .status-succeeded{fill:#15803d;font-weight:600}
svg .dot{fill:#94a3b8}svg .dot-succeeded{fill:#16a34a}svg .dot-failed{fill:#dc2626}
svg .dot-stopped_window,svg .dot-partial{fill:#d97706}svg .dot-running{fill:#2563eb}
.overview td,.overview th{white-space:nowrap;vertical-align:middle}
.overview td.reasoncell{white-space:normal}
footer{margin-top:26px;color:#64748b;font-size:12px;text-align:center}
@media print{body{background:#fff}.card,.panel,.top{box-shadow:none;break-inside:avoid}}
@media (max-width:900px){.tiles{grid-template-columns:repeat(2,1fr)}}
"""


CARD_ORDER = {"failed": 0, "stopped_window": 1, "partial": 1, "running": 2}


def _badge(result, big=False, text=None):
    return '<span class="badge%s status-%s">%s</span>' % (" big" if big else "", h(result), h(text or result_label(result)))


def _pill(result, text=None):
    return '<span class="pill status-%s">%s</span>' % (h(result), h(text or result_label(result)))


def _kind_chip(obj):
    short = obj["kind_short"]
    return '<span class="kind-chip%s" title="%s">%s</span>' % (" kcp" if short == "KCP" else "", h(obj["kind"]), h(short))


def _name_cell(obj):
    return '%s<span class="objname">%s</span>' % (_kind_chip(obj), h(object_name(obj)))


def _template_cell(obj):
    before, after = obj["before"], obj["after"]
    kinds = set(k for k in (before["kind"], after["kind"]) if k)
    kind_line = '<span class="kind">%s</span>' % h(" / ".join(sorted(kinds))) if kinds else ""
    bname, aname = before["name"], after["name"]
    if bname and aname and bname != aname:
        body = '<span class="nm">%s</span><span class="arrow">%s</span><span class="nm to">%s</span>' % (h(bname), ARROW, h(aname))
    elif aname or bname:
        body = h(aname or bname) + (' <span class="muted">(unchanged)</span>' if bname and aname else "")
    else:
        body = DASH
    versions = ""
    if before["version"] or after["version"]:
        if before["version"] and after["version"] and before["version"] != after["version"]:
            versions = '<br>%s<span class="arrow">%s</span><span class="to">%s</span>' % (
                h(before["version"]), ARROW, h(after["version"]))
        else:
            versions = '<br><span class="muted">%s</span>' % h(after["version"] or before["version"])
    return '<div class="tmpl">%s%s%s</div>' % (kind_line, body, versions)


def _undo_note(obj):
    undo = obj["undo"]
    if not undo or undo["state"] is None:
        return ""
    if undo["state"] == "failed":
        return '<div class="note red"><b>Undo failed</b>: %s</div>' % h(undo["failure_reason"] or "no reason recorded")
    target = obj["before"]["name"]
    took = duration(seconds_between(undo["started"], undo["finished"]))
    return '<div class="note orange">Undone%s in %s</div>' % (" to " + h(target) if target else "", h(took))


def _object_sub(obj):
    sub = []
    if obj["cluster"]:
        sub.append("cluster " + obj["cluster"])
    if obj["replicas"] is not None:
        sub.append("%d replica%s" % (obj["replicas"], "" if obj["replicas"] == 1 else "s"))
    return '<div class="sub">%s</div>' % h(" \u00b7 ".join(sub)) if sub else ""


def _objects_table(cluster, day):
    rows = []
    for obj in cluster["objects"]:
        bucket = object_bucket(obj)
        cls = {"failed": "is-failed", "deleted": "is-failed", "undone": "is-undone"}.get(bucket, "")
        rollout = seconds_between(obj["started"], obj["finished"])
        soak = soak_seconds(cluster, obj)
        notes = []
        if obj["failure_reason"] and obj["result"] in FAILURES:
            notes.append('<div class="note red">%s</div>' % h(obj["failure_reason"]))
        elif obj["failure_reason"]:
            notes.append('<div class="note">%s</div>' % h(obj["failure_reason"]))
        for stuck in obj["stuck_machines"]:
            notes.append('<div class="note">stuck: <code>%s</code>%s%s</div>' % (
                h(stuck["name"] or DASH), " on node <code>%s</code>" % h(stuck["node"]) if stuck["node"] else "",
                " \u2014 " + h(stuck["reason"]) if stuck["reason"] else ""))
        for drained in obj["drain_timeouts"]:
            notes.append('<div class="note orange">drain timed out: <code>%s</code>%s</div>' % (
                h(drained["name"] or DASH), " on node <code>%s</code>" % h(drained["node"]) if drained["node"] else ""))
        notes.append(_undo_note(obj))
        if obj["next_step"]:
            notes.append('<div class="note"><b>Next step:</b> %s</div>' % h(obj["next_step"]))
        for blocker in obj["blockers"]:
            notes.append('<div class="note amber">blocked: %s</div>' % h(blocker))
        rows.append(
            '<tr class="%s"><td class="objcell">%s%s</td><td class="wavecell">%s</td><td>%s</td><td>%s</td>'
            '<td class="num">%s</td><td class="num">%s</td><td class="num">%s</td><td>%s</td></tr>' % (
                cls, _name_cell(obj), _object_sub(obj), h(wave_label(cluster, obj["wave"])),
                _template_cell(obj), " ".join(_pill(result, label) for result, label in object_outcome(obj)),
                h(clock(obj["started"], day)), h(duration(rollout)), h(duration(soak)), "".join(notes)))
    return (
        '<table class="objects"><thead><tr><th>Object</th><th>Wave</th>'
        "<th>Template before %s after</th><th>Result</th><th class=\"num\">Started</th><th class=\"num\">Rollout</th>"
        '<th class="num">Soak</th><th>Reason / notes</th></tr></thead><tbody>%s</tbody></table>' % (ARROW, "".join(rows))
    )


def _plan_table(cluster):
    rows = []
    for obj in cluster["objects"]:
        blocked = bool(obj["blockers"])
        if blocked:
            blockers = '<ul class="blockers">%s</ul>' % "".join("<li>%s</li>" % h(b) for b in obj["blockers"])
        else:
            blockers = '<span class="green">none</span>' if obj["action"] in ("switch", "plan", "undo") else ""
        reason = '<div class="note">%s</div>' % h(obj["failure_reason"]) if obj["failure_reason"] else ""
        rows.append(
            '<tr class="%s"><td>%s</td><td class="objcell">%s</td><td class="num">%s</td><td>%s</td><td>%s%s</td>'
            '<td class="wavecell">%s</td><td>%s</td></tr>' % (
                "is-blocked" if blocked else "", h(obj["cluster"] or DASH), _name_cell(obj),
                h(obj["replicas"] if obj["replicas"] is not None else DASH), _template_cell(obj),
                h(action_text(obj)), reason, h(wave_label(cluster, obj["wave"])), blockers))
    return (
        '<table class="plan"><thead><tr><th>Workload cluster</th><th>Object</th><th class="num">Replicas</th>'
        "<th>Current template %s target template</th><th>Action</th><th>Wave</th><th>Blockers</th></tr></thead>"
        "<tbody>%s</tbody></table>" % (ARROW, "".join(rows))
    )


def _cluster_sentence(cluster, mode):
    return ", ".join(
        '<span class="%s">%s</span>' % (tone, h(text)) if tone else h(text)
        for text, tone in cluster_sentence_parts(cluster, mode)) + "."


def _reason_block(result, reason, next_step, extra=""):
    if not reason and not next_step and not extra:
        return ""
    warn = result != "failed"
    body = ""
    if reason:
        body += "<div>%s</div>" % h(reason)
    body += extra
    if next_step:
        body += '<div class="next"><b>Next step:</b> %s</div>' % h(next_step)
    return '<div class="cluster-reason%s">%s</div>' % (" warn" if warn else "", body)


def _legend(svg):
    """Legend for the marks that appear in ``svg``."""
    items = [("rollout", "rollout", "bar-rollout"), ("running", "still running", "bar-running"),
             ("soak", "soak (health gate)", "bar-soak"),
             ("failed", "failed", "bar-failed"), ("undo", "undo", "bar-undo"), ("wave", "wave start", "wave-boundary"),
             ("window", "maintenance window end", "window-end")]
    return '<div class="legend">%s</div>' % "".join(
        '<span><i class="sw %s"></i>%s</span>' % (cls, text) for cls, text, mark in items if 'class="%s' % mark in svg
        or 'class="bar %s' % mark in svg)


def _cluster_card(cluster, report, index):
    mode = report["mode"]
    day = (cluster["started"] or report["started"]).date() if (cluster["started"] or report["started"]) else None
    facts = []
    if cluster["capi_version"] or cluster["api_version"]:
        facts.append("CAPI <b>%s</b>%s" % (
            h(cluster["capi_version"] or "?"), " (%s)" % h(cluster["api_version"]) if cluster["api_version"] else ""))
    if cluster["started"]:
        facts.append("<b>%s</b> %s <b>%s</b> UTC" % (
            h(clock(cluster["started"], day)), ARROW, h(clock(cluster["finished"], day)) if cluster["finished"] else "\u2026"))
    if cluster["duration_seconds"] is not None:
        facts.append("took <b>%s</b>" % h(duration(cluster["duration_seconds"])))
    lock = cluster["lock"]
    if lock and lock["holder"]:
        held = ""
        if lock["acquired"]:
            held = " %s%s%s" % (h(clock(lock["acquired"], day)), ARROW,
                                h(clock(lock["released"], day)) if lock["released"] else "still held")
        facts.append("lock <code>%s</code>%s" % (h(lock["holder"]), held))
    reason = cluster["failure_reason"]
    pending = not_started(cluster)
    extra = ""
    if cluster["result"] == "stopped_window" and pending:
        extra = '<div class="aside">Not started: %s</div>' % ", ".join(h(object_label(o)) for o in pending)
    next_step = cluster["next_step"]
    parts = [
        '<section class="card status-%s" id="%s">' % (h(cluster["result"]), h(cluster["anchor"])),
        '<div class="card-head"><h3>%s%s</h3><div class="facts">%s</div></div>' % (
            h(cluster["name"]), _badge(cluster["result"]), "".join("<span>%s</span>" % f for f in facts)),
        '<p class="sentence">%s</p>' % _cluster_sentence(cluster, mode),
        _reason_block(cluster["result"], reason, next_step if reason or extra else next_step, extra),
    ]
    if cluster["notes"]:
        parts.append('<ul class="notes">%s</ul>' % "".join("<li>%s</li>" % h(n) for n in cluster["notes"]))
    if mode == "check":
        parts.append(_plan_table(cluster))
    else:
        svg = cluster_timeline(cluster, report, "tl%d" % index)
        if svg:
            parts.append(svg)
            parts.append(_legend(svg))
        elif cluster["objects"]:
            parts.append('<p class="muted">No times recorded for this management cluster.</p>')
        if cluster["objects"]:
            parts.append(_objects_table(cluster, day))
        else:
            parts.append('<p class="muted">No MachineDeployments or control planes selected.</p>')
    parts.append("</section>")
    return "".join(parts)


def _issue(result, head, body, next_step):
    """One entry of the 'Needs attention' panel."""
    if next_step:
        body += '<div class="next"><b>Next step:</b> %s</div>' % h(next_step)
    return '<div class="issue %s"><div class="issue-head">%s</div>%s</div>' % ("bad" if result == "failed" else "warn", head, body)


def _cluster_issue(cluster):
    head = '%s <b>%s</b>' % (_badge(cluster["result"]), h(cluster["name"]))
    body = '<div class="reason">%s</div>' % h(cluster["failure_reason"]) if cluster["failure_reason"] else ""
    pending = not_started(cluster)
    if pending:
        body += '<div class="aside">Not started: %s</div>' % ", ".join(h(object_label(o)) for o in pending)
    return _issue(cluster["result"], head, body, cluster["next_step"])


def _object_head(cluster, obj, badge):
    location = object_location(cluster, obj)
    return '%s <a href="#%s"><b>%s</b></a> \u203a <span class="obj">%s %s</span> <span class="muted">%s</span>' % (
        badge, h(cluster["anchor"]), h(cluster["name"]), h(obj["kind"]), h(object_name(obj)),
        h("(" + location + ")") if location else "")


def _failure_issue(cluster, failure):
    obj = failure["object"]
    body = '<div class="reason">%s</div>' % h(obj["failure_reason"])
    if obj["stuck_machines"]:
        body += '<ul class="stuck">%s</ul>' % "".join(
            "<li>machine <code>%s</code>%s%s</li>" % (
                h(s["name"] or DASH), " (node <code>%s</code>)" % h(s["node"]) if s["node"] else " (no node yet)",
                ": " + h(s["reason"]) if s["reason"] else "")
            for s in obj["stuck_machines"])
    undo = obj["undo"]
    if undo and undo["state"] == "failed":
        body += '<div class="aside red">Undo failed: %s</div>' % h(undo["failure_reason"] or "no reason recorded")
    elif undo and undo["state"] in ("undone", "undoing"):
        body += '<div class="aside"><span class="orange">Undone</span>: switched back to <code>%s</code> in %s%s.</div>' % (
            h(obj["before"]["name"] or "the previous template"),
            h(duration(seconds_between(undo["started"], undo["finished"]))),
            "; also undone: " + ", ".join(h(object_label(o)) for o in failure["also_undone"]) if failure["also_undone"] else "")
    return _issue("failed", _object_head(cluster, obj, _badge("deleted" if obj["result"] == "deleted" else "failed")), body,
                  failure["next_step"])


def _blocked_issue(cluster, obj):
    body = '<ul class="stuck">%s</ul>' % "".join("<li>%s</li>" % h(b) for b in obj["blockers"])
    return _issue("stopped_window", _object_head(cluster, obj, _badge("stopped_window", text="blocked")), body, obj["next_step"])


def _attention(report):
    items = []
    any_failed = False
    for cluster in report["management_clusters"]:
        needs = attention(cluster)
        if needs["show_cluster"]:
            items.append(_cluster_issue(cluster))
            any_failed = any_failed or cluster["result"] == "failed"
        items.extend(_failure_issue(cluster, failure) for failure in needs["failures"])
        any_failed = any_failed or bool(needs["failures"])
        items.extend(_blocked_issue(cluster, obj) for obj in needs["blocked"])
    if not items:
        clusters = report["management_clusters"]
        if report["mode"] == "check" and clusters:
            return '<section class="panel allgood"><b>Nothing blocks the plan.</b></section>'
        if clusters and report["result"] == "succeeded":
            return '<section class="panel allgood"><b>Nothing needs attention:</b> %s succeeded.</section>' % (
                "the management cluster" if len(clusters) == 1 else "all %d management clusters" % len(clusters))
        return ""
    title = "Needs attention" if any_failed else "Check before the window" if report["mode"] == "check" else "Needs attention"
    return '<section class="panel attention%s"><h2>%s (%d)</h2>%s</section>' % (
        "" if any_failed else " only-warn", h(title), len(items), "".join(items))


def _tile(key, value, sub="", cls=""):
    return '<div class="tile %s"><div class="k">%s</div><div class="v">%s</div><div class="s">%s</div></div>' % (
        cls, h(key), value, sub)


def _tiles(report, summary):
    mcs = summary["management_clusters"]
    mds = summary["machine_deployments"]
    cps = summary["control_planes"]
    tiles = []
    if report["mode"] == "check":
        tiles.append(_tile("Management clusters", "%d" % mcs["total"],
                           '<span class="red">%d could not be planned</span>' % mcs["failed"] if mcs["failed"] else "all planned",
                           "bad" if mcs["failed"] else ""))
        tiles.append(_tile("MachineDeployments", "%d <small>/ %d to switch</small>" % (mds["planned"], mds["total"]),
                           "%d already on target" % mds["unchanged"]))
        tiles.append(_tile("Control planes", "%d <small>/ %d to switch</small>" % (cps["planned"], cps["total"]),
                           "%d already on target" % cps["unchanged"]))
        tiles.append(_tile("Machines to replace", "%d" % summary["machines_to_replace"], "replicas of the objects to switch"))
        blocked = summary["objects"]["blocked"]
        tiles.append(_tile("Blocked objects", "%d" % blocked, "fix before the window" if blocked else "nothing blocks the plan",
                           "warn" if blocked else "good"))
        return '<div class="tiles">%s</div>' % "".join(tiles)
    ok = mcs["succeeded"]
    sub = []
    if mcs["failed"]:
        sub.append('<span class="red">%d failed</span>' % mcs["failed"])
    if mcs["stopped_window"]:
        sub.append('<span class="amber">%d stopped (window)</span>' % mcs["stopped_window"])
    if mcs["partial"]:
        sub.append('<span class="amber">%d partial</span>' % mcs["partial"])
    if mcs["skipped"]:
        sub.append("%d skipped" % mcs["skipped"])
    if mcs["running"]:
        sub.append("%d running" % mcs["running"])
    tiles.append(_tile("Management clusters", "%d <small>/ %d ok</small>" % (ok, mcs["total"]), " \u00b7 ".join(sub) or "all succeeded",
                       "bad" if mcs["failed"] else "warn" if ok < mcs["total"] else "good"))

    def kind_tile(label, counts):
        bits = []
        if counts["failed"]:
            bits.append('<span class="red">%d failed</span>' % counts["failed"])
        if counts["deleted"]:
            bits.append('<span class="red">%d deleted</span>' % counts["deleted"])
        if counts["reverted"]:
            bits.append('<span class="orange">%d undone</span>' % counts["reverted"])
        if counts["pending"]:
            bits.append("%d not started" % counts["pending"])
        if counts["unchanged"]:
            bits.append("%d already on target" % counts["unchanged"])
        if counts["skipped"]:
            bits.append("%d skipped" % counts["skipped"])
        if counts["running"]:
            bits.append("%d running" % counts["running"])
        cls = "bad" if counts["failed"] or counts["deleted"] else "warn" if counts["pending"] or counts["reverted"] else "good" if counts["total"] else ""
        return _tile(label, "%d <small>/ %d switched</small>" % (counts["switched"], counts["total"]),
                     " \u00b7 ".join(bits) or ("all switched" if counts["total"] else "none selected"), cls)

    tiles.append(kind_tile("MachineDeployments", mds))
    tiles.append(kind_tile("Control planes", cps))
    tiles.append(_tile("Machines replaced", "%d" % summary["machines_replaced"],
                       "%d updated in place" % summary["machines_updated_in_place"] if summary["machines_updated_in_place"]
                       else "replicas of switched objects"))
    span = ""
    if report["started"]:
        day = report["started"].date()
        span = "%s %s %s UTC" % (clock(report["started"], day)[:5], ARROW, clock(report["finished"], day)[:5] if report["finished"] else "\u2026")
    tiles.append(_tile("Total duration", h(duration(report["duration_seconds"])), h(span)))
    return '<div class="tiles">%s</div>' % "".join(tiles)


def _overview(report):
    rows = []
    for cluster in report["management_clusters"]:
        objs = cluster["objects"]
        stats = cluster_stats(cluster)
        switched, failed, reverted = stats["switched"], stats["failed"], stats["reverted"]
        waves_done = stats["waves_done"]
        reason = cluster_reason(cluster)
        rows.append(
            '<tr><td><a href="#%s"><b>%s</b></a></td><td>%s</td><td>%s</td><td class="num">%s</td><td class="num">%s</td>'
            '<td class="num">%s</td><td class="num">%s</td><td class="num">%s</td><td class="reasoncell %s">%s</td></tr>' % (
                h(cluster["anchor"]), h(cluster["name"]), h(cluster["capi_version"] or DASH), _badge(cluster["result"]),
                "%d / %d" % (waves_done, len(cluster["waves"])),
                "%d / %d" % (switched, len(objs)),
                '<span class="red">%d</span>' % failed if failed else "0",
                '<span class="orange">%d</span>' % reverted if reverted else "0",
                h(duration(cluster["duration_seconds"])),
                "red" if cluster["result"] == "failed" else "amber" if reason else "",
                '<span title="%s">%s</span>' % (h(reason), h(shorten(reason, 110))) if reason else ""))
    return (
        '<table class="overview"><thead><tr><th>Management cluster</th><th>CAPI</th><th>Result</th><th class="num">Waves</th>'
        '<th class="num">Switched</th><th class="num">Failed</th><th class="num">Undone</th><th class="num">Duration</th>'
        "<th>Reason</th></tr></thead><tbody>%s</tbody></table>" % "".join(rows)
    )


def render_html(raw):
    """The complete HTML document for a report (raw or normalised)."""
    report = raw if isinstance(raw, NormalizedReport) else normalize(raw)
    summary = summarize(report)
    status = report["result"]
    title_status = result_label(status)
    if report["mode"] == "check":
        blocked = summary["objects"]["blocked"]
        badge = _badge("planned", big=True, text="dry run \u00b7 %d blocked" % blocked if blocked else "dry run \u00b7 plan")
        if summary["management_clusters"]["failed"]:
            badge = _badge("failed", big=True, text="plan incomplete")
    else:
        badge = _badge(status, big=True, text=title_status)
    meta = []
    meta.append("<b>%s</b>" % ("check mode (dry run, nothing changed)" if report["mode"] == "check" else "apply"))
    if report["started"] and report["mode"] == "check":
        meta.append("planned at %s" % h(timestamp(report["started"])))
    elif report["started"]:
        meta.append("%s %s %s" % (h(timestamp(report["started"])), ARROW,
                                  h(timestamp(report["finished"])) if report["finished"] else "\u2026"))
    window = report["window"]
    if window and (window["start"] or window["end"]):
        day = (window["start"] or window["end"]).date()
        meta.append("window %s\u2013%s UTC" % (h(clock(window["start"], day)[:5] if window["start"] else "?"),
                                               h(clock(window["end"], day)[:5] if window["end"] else "?")))
    if report["run_by"]:
        meta.append("run by <code>%s</code>" % h(report["run_by"]))
    heading = "Plan for hardware refresh" if report["mode"] == "check" else "Hardware refresh"
    header = (
        '<header class="top status-%s"><div class="title-row"><div><div class="eyebrow">capi.rollout \u00b7 fleet report</div>'
        '<h1>%s <span class="id">%s</span></h1><div class="meta">%s</div></div><div>%s</div></div>%s</header>' % (
            h(status), h(heading), h(report["refresh_id"] or "(no refresh id)"), " \u00b7 ".join(meta), badge,
            _tiles(report, summary))
    )
    body = [header, _attention(report)]
    clusters = report["management_clusters"]
    if report["mode"] != "check":
        fleet = fleet_timeline(report, "fleet")
        if fleet and len(clusters) > 1:
            body.append('<section class="panel"><h2>Fleet timeline</h2>%s%s</section>' % (fleet, _legend(fleet)))
    if clusters:
        if report["mode"] != "check":
            body.append('<section class="panel"><h2>Management clusters</h2>%s</section>' % _overview(report))
        # details of what went wrong first; the fleet timeline and the overview keep the run order
        ordered = sorted(enumerate(clusters), key=lambda item: (CARD_ORDER.get(item[1]["result"], 3), item[0]))
        for index, cluster in ordered:
            body.append(_cluster_card(cluster, report, index))
    else:
        body.append('<section class="panel"><p class="muted">No management clusters in this report.</p></section>')
    body.append(
        "<footer>Generated by capi.rollout \u00b7 report format %d \u00b7 times in UTC \u00b7 the same data, machine-readable, "
        "is in report.json</footer>" % report["report_version"])
    title = "%s %s \u2014 %s" % (heading, report["refresh_id"] or "", title_status)
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        "<title>%s</title><style>%s</style></head><body><div class=\"wrap\">%s</div></body></html>\n" % (
            h(title), CSS, "".join(body))
    )
