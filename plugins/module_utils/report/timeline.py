# Copyright: (c) 2026, capi.rollout contributors
# GNU General Public License v3.0+ (see LICENSES/GPL-3.0-or-later.txt or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Inline SVG timelines for the HTML fleet report (no scripts, no external references).

Input is a normalised report (model.normalize). Colours come from CSS classes defined by the
page (page.py), so the SVG stays small and themable; hatch patterns are defined per SVG with
an id prefix unique within the page.
"""

from __future__ import absolute_import, division, print_function
__metaclass__ = type

import datetime

from ansible_collections.capi.rollout.plugins.module_utils.report.fmt import (
    clock,
    duration,
    h,
    seconds_between,
    shorten,
)
from ansible_collections.capi.rollout.plugins.module_utils.report.model import (
    object_name,
    result_label,
    wave_of,
)

WIDTH = 1200
LABEL_W = 290          # left column: object names
CHART_X0 = LABEL_W + 10
CHART_X1 = WIDTH - 170  # right of the chart: per-row duration labels
AXIS_H = 34
ROW_H = 34
WAVE_H = 26
BAR_H = 14
MIN_BAR = 3

# candidate tick steps in seconds
_STEPS = (5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400)
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


class Scale:
    """Maps times onto the chart's x range."""

    def __init__(self, start, end, x0=CHART_X0, x1=CHART_X1):
        if end <= start:
            end = start + datetime.timedelta(seconds=60)
        self.start = start
        self.end = end
        self.x0 = x0
        self.x1 = x1
        self.seconds = (end - start).total_seconds()

    def x(self, when):
        offset = (when - self.start).total_seconds()
        return self.x0 + (self.x1 - self.x0) * offset / self.seconds

    def ticks(self, max_ticks=8):
        step = _STEPS[-1]
        for candidate in _STEPS:
            if self.seconds / candidate <= max_ticks:
                step = candidate
                break
        first = int((self.start - EPOCH).total_seconds() // step + 1) * step
        out = []
        value = first
        while True:
            when = EPOCH + datetime.timedelta(seconds=value)
            if when > self.end:
                break
            out.append(when)
            value += step
        return step, out


def _fmt(value):
    return ("%.1f" % value).rstrip("0").rstrip(".")


def _rect(x0, x1, y, height, cls, title=None, rx=3):
    width = max(x1 - x0, MIN_BAR)
    body = '<rect class="%s" x="%s" y="%s" width="%s" height="%s" rx="%s">' % (
        cls, _fmt(x0), _fmt(y), _fmt(width), _fmt(height), rx)
    if title:
        body += "<title>%s</title>" % h(title)
    return body + "</rect>"


def _text(x, y, text, cls, anchor="start", title=None):
    body = '<text class="%s" x="%s" y="%s" text-anchor="%s">%s' % (cls, _fmt(x), _fmt(y), anchor, h(text))
    if title:
        body += "<title>%s</title>" % h(title)
    return body + "</text>"


def _line(x0, y0, x1, y1, cls):
    return '<line class="%s" x1="%s" y1="%s" x2="%s" y2="%s"/>' % (cls, _fmt(x0), _fmt(y0), _fmt(x1), _fmt(y1))


def _defs(uid):
    return (
        "<defs>"
        '<pattern id="%s-hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">'
        '<rect width="6" height="6" class="hatch-bg"/><line x1="0" y1="0" x2="0" y2="6" class="hatch-fg"/></pattern>'
        '<pattern id="%s-stripe" width="8" height="8" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">'
        '<rect width="8" height="8" class="stripe-bg"/><line x1="0" y1="0" x2="0" y2="8" class="stripe-fg"/></pattern>'
        "</defs>" % (uid, uid)
    )


def _axis(scale, top, bottom, day):
    """Tick labels at the top, faint grid lines down to ``bottom``."""
    step, ticks = scale.ticks()
    parts = [_line(scale.x0, top + AXIS_H - 6, scale.x1, top + AXIS_H - 6, "axis")]
    for when in ticks:
        x = scale.x(when)
        parts.append(_line(x, top + AXIS_H - 10, x, bottom, "grid"))
        label = when.strftime("%H:%M:%S") if step < 60 else clock(when, day)[:-3] if when.date() == day else clock(when, day)
        parts.append(_text(x, top + 16, label, "tick", "middle"))
    parts.append(_text(scale.x1 + 8, top + 16, "UTC", "tick muted"))
    return "".join(parts)


def _window_marker(report, scale, height, day):
    """Dashed line at the end of the maintenance window, labelled below the rows; returns (parts, new height)."""
    window = report.get("window") or {}
    end = window.get("end")
    if end is None or not scale.start <= end <= scale.end:
        return [], height
    wx = scale.x(end)
    height += 18
    parts = [
        _line(wx, AXIS_H - 8, wx, height - 16, "window-end"),
        _text(wx, height - 3, "maintenance window ends " + clock(end, day)[:5], "window-label",
              "end" if wx > (scale.x0 + scale.x1) / 2 else "start"),
    ]
    return parts, height


def _span_of(cluster, report):
    times = []
    for obj in cluster["objects"]:
        times.extend([obj["started"], obj["finished"]])
        if obj["undo"]:
            times.extend([obj["undo"]["started"], obj["undo"]["finished"]])
    for wave in cluster["waves"]:
        times.extend([wave["started"], wave["rollout_finished"], wave["soak_finished"], wave["finished"]])
    times.extend([cluster["started"], cluster["finished"]])
    times = [t for t in times if t is not None]
    if not times:
        return None, None
    end = max(times)
    window = report.get("window") or {}
    if window.get("end") is not None and cluster["result"] == "stopped_window":
        end = max(end, window["end"])
    return min(times), end


def _padded_scale(start, end):
    pad = max((end - start).total_seconds() * 0.02, 5)
    return Scale(start - datetime.timedelta(seconds=pad), end + datetime.timedelta(seconds=pad))


def _object_row(uid, cluster, obj, scale, y, run_end):
    """One object: rollout bar, wait line, soak bar, undo bar, marker, label on the right."""
    parts = []
    mid = y + ROW_H / 2
    chip = obj["kind_short"] if len(obj["kind_short"]) <= 4 else obj["kind_short"][:3]
    parts.append('<rect class="chip chip-%s" x="8" y="%s" width="36" height="16" rx="4"/>' % (
        "kcp" if chip == "KCP" else "md", _fmt(mid - 12)))
    parts.append(_text(26, mid, chip, "chip-text", "middle"))
    parts.append(_text(52, mid - 1, shorten(object_name(obj), 34), "row-name", title=obj["ref"]))
    sub = []
    if obj["cluster"]:
        sub.append("cluster " + obj["cluster"])
    if obj["replicas"] is not None:
        sub.append("%d replica%s" % (obj["replicas"], "" if obj["replicas"] == 1 else "s"))
    parts.append(_text(52, mid + 12, shorten(" \u00b7 ".join(sub), 44), "row-sub"))

    wave = wave_of(cluster, obj)
    started, finished, result = obj["started"], obj["finished"], obj["result"]
    label, label_cls, label_x, marker = None, "bar-label", None, ""
    if started is None:
        text = result_label("unchanged" if obj["action"] == "unchanged" else result)
        parts.append(_text(scale.x0 + 4, mid + 4, text, "bar-label muted"))
        return "".join(parts)

    end = finished
    if end is None:
        end = run_end or scale.end
    x0, x1 = scale.x(started), scale.x(end)
    rollout_secs = seconds_between(started, end)
    title = "%s: rollout %s (%s \u2192 %s)" % (obj["ref"], duration(rollout_secs), clock(started), clock(end))
    if result in ("failed", "deleted"):
        # a deleted object's bar ends when the wait saw it gone
        parts.append(_rect(x0, x1, mid - BAR_H / 2, BAR_H, "bar bar-failed", title + " \u2014 %s: %s" % (result, obj["failure_reason"] or "")))
        marker = ('<circle class="marker-failed" cx="%s" cy="%s" r="7"><title>%s</title></circle>' % (
            _fmt(max(x1, x0 + MIN_BAR)), _fmt(mid), h("%s: %s" % (result, obj["failure_reason"] or "")))
            + _text(max(x1, x0 + MIN_BAR), mid + 4, "!", "marker-text", "middle"))
        label, label_cls = "%s after %s" % (result, duration(rollout_secs)), "bar-label failed"
        label_x = max(x1, x0 + MIN_BAR) + 11
    elif result == "running" or finished is None:
        parts.append('<rect class="bar bar-running" x="%s" y="%s" width="%s" height="%s" rx="3" fill="url(#%s-stripe)"><title>%s</title></rect>' % (
            _fmt(x0), _fmt(mid - BAR_H / 2), _fmt(max(x1 - x0, MIN_BAR)), BAR_H, uid, h(title + " (still running)")))
        label, label_cls = "running %s" % duration(rollout_secs), "bar-label"
    else:
        parts.append(_rect(x0, x1, mid - BAR_H / 2, BAR_H, "bar bar-rollout", title))
        label = duration(rollout_secs)
        # waiting for the rest of the wave, then the wave's soak
        soak_start = wave["rollout_finished"] if wave and wave["rollout_finished"] else None
        soak_end = None
        if wave and wave["soak_finished"]:
            soak_end = wave["soak_finished"]
        elif wave and wave["result"] == "running" and soak_start:
            soak_end = run_end or scale.end
        if obj["undo"] and obj["undo"]["started"] and soak_end and obj["undo"]["started"] < soak_end:
            soak_end = obj["undo"]["started"]
        if soak_start and soak_end and soak_end > soak_start and soak_start >= finished - datetime.timedelta(seconds=1):
            if soak_start > finished:
                parts.append(_line(x1, mid, scale.x(soak_start), mid, "wait"))
            sx0, sx1 = scale.x(soak_start), scale.x(soak_end)
            soak_secs = seconds_between(soak_start, soak_end)
            parts.append(_rect(sx0, sx1, mid - BAR_H / 2 + 2, BAR_H - 4, "bar bar-soak",
                               "%s: soak %s (%s \u2192 %s)" % (obj["ref"], duration(soak_secs), clock(soak_start), clock(soak_end))))
            label += " + soak %s" % duration(soak_secs)
            x1 = max(sx1, sx0 + MIN_BAR)
    undo = obj["undo"]
    if undo and undo["started"] is not None:
        ux0 = scale.x(undo["started"])
        uend = undo["finished"] or run_end or scale.end
        ux1 = scale.x(uend)
        undo_title = "%s: undo %s (%s \u2192 %s)%s" % (
            obj["ref"], duration(seconds_between(undo["started"], uend)), clock(undo["started"]), clock(uend),
            " \u2014 undo failed: %s" % undo["failure_reason"] if undo["result"] == "failed" else "")
        parts.append('<rect class="bar bar-undo%s" x="%s" y="%s" width="%s" height="%s" rx="3" fill="url(#%s-hatch)"><title>%s</title></rect>' % (
            " undo-failed" if undo["result"] == "failed" else "", _fmt(ux0), _fmt(mid - BAR_H / 2), _fmt(max(ux1 - ux0, MIN_BAR)),
            BAR_H, uid, h(undo_title)))
        undo_label = "undo failed" if undo["result"] == "failed" else "undone in %s" % duration(seconds_between(undo["started"], uend))
        label = (label + " \u00b7 " if label else "") + undo_label
        if label_cls == "bar-label":
            label_cls = "bar-label undone"
        x1 = max(x1, ux1, ux0 + MIN_BAR)
        label_x = None
    if label:
        lx = label_x if label_x is not None else x1 + 6
        parts.append(_label(lx, x0, mid + 4, label, label_cls))
    parts.append(marker)
    return "".join(parts)


def text_width(text, size=11.5):
    """Rough rendered width of ``text`` in SVG units (sans-serif, average glyph ~0.56em)."""
    return len(text) * size * 0.56


def _label(x, bar_start, y, text, cls):
    """A label right of a bar; left of the bar when it would leave the SVG; shortened as a last resort."""
    if x + text_width(text) <= WIDTH - 4:
        return _text(x, y, text, cls)
    if bar_start - 6 - text_width(text) >= 4:
        return _text(bar_start - 6, y, text, cls, "end")
    room = int((WIDTH - 4 - x) / (11.5 * 0.56))
    return _text(x, y, shorten(text, max(room, 6)), cls, title=text)


def cluster_timeline(cluster, report, uid):
    """SVG (string) for one management cluster, or None when nothing has times (plans, skipped runs)."""
    start, end = _span_of(cluster, report)
    if start is None:
        return None
    scale = _padded_scale(start, end)
    day = start.date()
    rows = []
    groups = []
    seen = set()
    for wave in cluster["waves"]:
        groups.append((wave, wave["objects"]))
        seen.update(id(o) for o in wave["objects"])
    loose = [o for o in cluster["objects"] if id(o) not in seen]
    if loose:
        groups.insert(0, (None, loose))
    height = AXIS_H + sum((WAVE_H if wave is not None else 0) + ROW_H * len(objs) for wave, objs in groups) + 8
    run_end = cluster["finished"] or report.get("finished")
    y = AXIS_H
    bands = []
    for wave, objs in groups:
        group_top = y
        if wave is not None:
            title = "WAVE %d" % wave["index"] + (" \u00b7 %s" % wave["name"] if wave["name"] else "")
            rows.append(_text(8, y + 17, shorten(title, 40), "wave-title"))
            bits = []
            if wave["started"] and wave["rollout_finished"]:
                bits.append("rollout %s" % duration(seconds_between(wave["started"], wave["rollout_finished"])))
            if wave["rollout_finished"] and wave["soak_finished"]:
                bits.append("soak %s" % duration(seconds_between(wave["rollout_finished"], wave["soak_finished"])))
            if wave["result"] and wave["result"] not in ("succeeded",):
                bits.append(wave["result"].replace("_", " "))
            if wave["started"] is not None:
                wx0 = scale.x(wave["started"])
                wend = wave["finished"] or wave["soak_finished"] or wave["rollout_finished"] or run_end or end
                wx1 = max(scale.x(wend), wx0 + MIN_BAR)
                rows.append(_line(wx0, y + 13, wx1, y + 13, "wave-span"))
                rows.append(_line(wx0, y + 8, wx0, y + 18, "wave-span"))
                rows.append(_line(wx1, y + 8, wx1, y + 18, "wave-span"))
                if bits:
                    rows.append(_label(wx1 + 6, wx0, y + 17, " \u00b7 ".join(bits), "wave-meta"))
                bands.append((wx0, wx1))
                rows.append(_line(wx0, AXIS_H - 6, wx0, height - 4, "wave-boundary"))
            elif bits:
                rows.append(_text(scale.x0 + 4, y + 17, " \u00b7 ".join(bits), "wave-meta"))
            y += WAVE_H
        for obj in objs:
            rows.append('<g class="row">' + _object_row(uid, cluster, obj, scale, y, run_end) + "</g>")
            y += ROW_H
        if wave is not None and wave["started"] is not None and objs:
            wx0, wx1 = bands[-1]
            rows.insert(0, '<rect class="wave-band" x="%s" y="%s" width="%s" height="%s"/>' % (
                _fmt(wx0), _fmt(group_top + WAVE_H - 2), _fmt(wx1 - wx0), _fmt(y - group_top - WAVE_H + 2)))
    rows_bottom = height
    extra, height = _window_marker(report, scale, height, day)
    svg = (
        '<svg class="timeline" viewBox="0 0 %d %d" width="100%%" role="img" aria-label="%s">' % (
            WIDTH, height, h("Timeline of management cluster %s" % cluster["name"]))
        + _defs(uid)
        + _axis(scale, 0, rows_bottom - 4, day)
        + "".join(rows)
        + "".join(extra)
        + "</svg>"
    )
    return svg


def fleet_timeline(report, uid):
    """One row per management cluster: its waves as rollout (solid) and soak (light) segments."""
    clusters = [c for c in report["management_clusters"] if _span_of(c, report)[0] is not None]
    if not clusters:
        return None
    spans = [_span_of(c, report) for c in clusters]
    start = min(span[0] for span in spans)
    end = max(span[1] for span in spans)
    scale = _padded_scale(start, end)
    day = start.date()
    row_h = 30
    height = AXIS_H + row_h * len(clusters) + 8
    parts = []
    y = AXIS_H
    for cluster in clusters:
        mid = y + row_h / 2
        parts.append('<a href="#%s">' % h(cluster["anchor"]))
        parts.append(_text(8, mid + 5, shorten(cluster["name"], 30), "row-name strong", title=cluster["name"]))
        parts.append("</a>")
        parts.append('<circle class="dot dot-%s" cx="%s" cy="%s" r="5"/>' % (
            h(cluster["result"]), _fmt(LABEL_W - 4), _fmt(mid)))
        cstart, cend = _span_of(cluster, report)
        right = scale.x(cstart)
        drew = False
        for wave in cluster["waves"]:
            if wave["started"] is None:
                continue
            rollout_end = wave["rollout_finished"] or wave["finished"] or cend
            cls = "bar bar-rollout"
            if wave["result"] in ("failed",):
                cls = "bar bar-failed"
            elif wave["result"] in ("undone",):
                cls = "bar bar-undo"
            wx0, wx1 = scale.x(wave["started"]), scale.x(rollout_end)
            wname = "wave %d%s" % (wave["index"], " (%s)" % wave["name"] if wave["name"] else "")
            parts.append(_rect(wx0, wx1, mid - BAR_H / 2, BAR_H, cls, "%s %s: rollout %s, %s" % (
                cluster["name"], wname, duration(seconds_between(wave["started"], rollout_end)), wave["result"] or "")))
            right = max(right, wx1)
            if wave["soak_finished"] and wave["rollout_finished"] and wave["soak_finished"] > wave["rollout_finished"]:
                sx0, sx1 = scale.x(wave["rollout_finished"]), scale.x(wave["soak_finished"])
                parts.append(_rect(sx0, sx1, mid - BAR_H / 2 + 2, BAR_H - 4, "bar bar-soak", "%s %s: soak %s" % (
                    cluster["name"], wname, duration(seconds_between(wave["rollout_finished"], wave["soak_finished"])))))
                right = max(right, sx1)
            undos = [o["undo"] for o in wave["objects"] if o["undo"] and o["undo"]["started"]]
            if undos:
                ustart = min(u["started"] for u in undos)
                uend = max((u["finished"] or cend) for u in undos)
                parts.append('<rect class="bar bar-undo" x="%s" y="%s" width="%s" height="%s" rx="3" fill="url(#%s-hatch)"><title>%s</title></rect>' % (
                    _fmt(scale.x(ustart)), _fmt(mid - BAR_H / 2), _fmt(max(scale.x(uend) - scale.x(ustart), MIN_BAR)), BAR_H, uid,
                    h("%s %s: undo %s" % (cluster["name"], wname, duration(seconds_between(ustart, uend))))))
                right = max(right, scale.x(uend))
            drew = True
        if not drew:
            parts.append(_rect(scale.x(cstart), scale.x(cend), mid - BAR_H / 2, BAR_H, "bar bar-rollout",
                               "%s: %s" % (cluster["name"], duration(seconds_between(cstart, cend)))))
            right = max(right, scale.x(cend))
        label = "%s \u00b7 %s" % (result_label(cluster["result"]), duration(cluster["duration_seconds"]))
        parts.append(_label(right + 8, scale.x(cstart), mid + 4, label, "bar-label status-%s" % h(cluster["result"])))
        y += row_h
    rows_bottom = height
    extra, height = _window_marker(report, scale, height, day)
    parts.extend(extra)
    return (
        '<svg class="timeline fleet" viewBox="0 0 %d %d" width="100%%" role="img" aria-label="Fleet timeline">' % (WIDTH, height)
        + _defs(uid)
        + _axis(scale, 0, rows_bottom - 4, day)
        + "".join(parts)
        + "</svg>"
    )
