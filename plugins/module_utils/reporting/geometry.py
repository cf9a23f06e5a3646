# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The HTML report's busbw plots and fleet chart as numbers, for their SVG templates (templates/reports/
busbw_plot.svg.j2, _chart.svg.j2): one frame, one tick step and one tick rule for both. Coordinates come out
formatted; the fleet chart's names, links and titles are html_view.py's, the sibling strip plots fleet_plots.py's.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import math

from ansible_collections.gpufleet.burnin.plugins.module_utils.judging.nccl_results import size_label

COLORS = {"oop": "#1f77b4", "ip": "#ff7f0e", "pass": "#d62728", "warn": "#f5b041", "expected": "#7f7f7f", "avg": "#2ca02c", "avg_pass": "#9467bd"}


def num(value):
    return "%.1f" % value


def nice_step(span):
    raw = span / 5.0 if span > 0 else 1.0
    power = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 2.5, 5, 10):
        if raw <= factor * power:
            return factor * power
    return 10 * power  # pragma: no cover


def tick_values(low, high, step):
    """The axis values from LOW by STEP up to HIGH; added up step by step, so the last tick lands where the charts
    always drew it."""
    values, value = [], low
    while value <= high + 1e-9:
        values.append(value)
        value += step
    return values


def frame(width, height, left, top, plot_w, plot_h):
    """The SVG's size and its plot area, as every chart's template reads them."""
    return {
        "width": width,
        "height": height,
        "left": left,
        "top": top,
        "plot_w": plot_w,
        "plot_h": plot_h,
        "right_x": left + plot_w,
        "bottom_y": top + plot_h,
    }


def plot_geometry(case, cluster_name=""):
    """What the busbw plot of a testcase draws (templates/reports/busbw_plot.svg.j2), coordinates and labels formatted:
    busbw (GB/s) against message size (log scale), the thresholds, the measured average; None without data."""
    points = [item for item in case.get("series") or [] if isinstance(item, (list, tuple)) and len(item) >= 2 and item[0] and item[0] > 0]
    if not points:
        return None
    width, height = 760, 354
    left, right, top, bottom = 64, 24, 42, 54
    plot_w, plot_h = width - left - right, height - top - bottom
    xs = [math.log(item[0], 2) for item in points]
    x_lo, x_hi = min(xs), max(xs)
    if x_hi - x_lo < 1:
        x_lo, x_hi = x_lo - 1, x_hi + 1
    thresholds = case.get("thresholds") or []
    values = [value for item in points for value in item[1:3] if value is not None]
    for record in thresholds:
        values.extend(value for value in (record.get("pass"), record.get("warn"), record.get("expected")) if value is not None)
        values.extend(item["pass"] for item in record.get("ranges") or [] if item.get("pass") is not None)
    avg = (case.get("metrics") or {}).get("avg_busbw")
    if avg is not None:
        values.append(avg)
    y_hi = max(values + [1.0]) * 1.1
    step = nice_step(y_hi)
    y_hi = math.ceil(y_hi / step) * step

    def px(size):
        return left + (math.log(size, 2) - x_lo) / (x_hi - x_lo) * plot_w

    def py(value):
        return top + plot_h - (value / y_hi) * plot_h

    plot = dict(
        frame(width, height, left, top, plot_w, plot_h),
        title="busbw vs message size: %s %s" % (cluster_name, case.get("workload") or ""),
        center_x=left + plot_w // 2,
        center_y=top + plot_h // 2,
        label_y=height - 10,
        colors=COLORS,
        y_ticks=[],
        x_ticks=[],
        thresholds=[],
        avg=None,
        series=[],
        legend=[],
    )
    for value in tick_values(0.0, y_hi, step):
        y = py(value)
        plot["y_ticks"].append({"y": num(y), "label_y": num(y + 4), "label": "%g" % value})
    tick_every = max(1, int(math.ceil(len(points) / 10.0)))
    for index, item in enumerate(points):
        if index % tick_every and index != len(points) - 1:
            continue
        plot["x_ticks"].append({"x": num(px(item[0])), "label": size_label(item[0])})
    for record in thresholds:
        label = "%s: %s" % (record.get("metric"), record.get("id"))
        if record.get("metric") == "range":
            # Each range's pass line (and warning band) spans only its sizes, clipped to the plotted sweep.
            for item in record.get("ranges") or []:
                low = max(math.log(max(item.get("min") or 1, 1), 2), x_lo)
                high = x_hi if item.get("max") is None else min(math.log(item["max"], 2), x_hi)
                if item.get("pass") is None or low > high:
                    continue
                x1, x2 = left + (low - x_lo) / (x_hi - x_lo) * plot_w, left + (high - x_lo) / (x_hi - x_lo) * plot_w
                x1 = min(x1, x2 - 2.0)  # a range of one plotted size still shows, inside the plot
                where = "%s in %s" % (record.get("id"), item.get("label") or "")
                if item.get("warn") is not None:
                    plot["thresholds"].append(
                        {
                            "kind": "range-warn",
                            "x": num(x1),
                            "width": num(x2 - x1),
                            "y": num(py(item["pass"])),
                            "height": num(max(py(item["warn"]) - py(item["pass"]), 0.5)),
                            "title": "warning band %g-%g GB/s (%s)" % (item["warn"], item["pass"], where),
                        }
                    )
                plot["thresholds"].append(
                    {
                        "kind": "range-pass",
                        "x1": num(x1),
                        "x2": num(x2),
                        "y": num(py(item["pass"])),
                        "title": "pass >= %g GB/s at every size (%s)" % (item["pass"], where),
                    }
                )
            continue
        if record.get("metric") == "avg":
            if record.get("pass") is not None:
                plot["thresholds"].append(
                    {
                        "kind": "avg",
                        "y": num(py(record["pass"])),
                        "label_y": num(py(record["pass"]) - 4),
                        "title": "average pass >= %s GB/s (%s)" % (record["pass"], record.get("id")),
                        "label": "average pass >= %g GB/s (%s)" % (record["pass"], record.get("id")),
                    }
                )
            continue
        if record.get("warn") is not None and record.get("pass") is not None:
            y_pass, y_warn = py(record["pass"]), py(record["warn"])
            plot["thresholds"].append(
                {
                    "kind": "warn",
                    "y": num(y_pass),
                    "height": num(max(y_warn - y_pass, 0.5)),
                    "title": "warning band %g-%g GB/s (%s)" % (record["warn"], record["pass"], label),
                }
            )
        if record.get("expected") is not None:
            plot["thresholds"].append({"kind": "expected", "y": num(py(record["expected"])), "title": "published %g GB/s (%s)" % (record["expected"], label)})
        if record.get("pass") is not None:
            plot["thresholds"].append(
                {
                    "kind": "pass",
                    "y": num(py(record["pass"])),
                    "label_y": num(py(record["pass"]) - 4),
                    "title": "pass >= %g GB/s (%s)" % (record["pass"], label),
                    "label": "pass >= %g GB/s (%s)" % (record["pass"], record.get("id")),
                }
            )
        if record.get("size") and x_lo <= math.log(record["size"], 2) <= x_hi:
            plot["thresholds"].append({"kind": "size", "x": num(px(record["size"]))})
    if avg is not None:
        plot["avg"] = {"y": num(py(avg)), "title": "measured average %g GB/s" % avg}
    for key, css in ((1, "series-oop"), (2, "series-ip")):
        drawn = [item for item in points if len(item) > key and item[key] is not None]
        if not drawn:
            continue
        side = "out-of-place" if key == 1 else "in-place"
        coords = [(num(px(item[0])), num(py(item[key]))) for item in drawn]
        plot["series"].append(
            {
                "css": css,
                "point_css": css[7:],
                "color": COLORS["oop" if key == 1 else "ip"],
                "dash": "" if key == 1 else "5 3",
                "points": " ".join("%s,%s" % coord for coord in coords),
                "circles": [{"x": x, "y": y, "title": "%s %s: %g GB/s" % (size_label(item[0]), side, item[key])} for item, (x, y) in zip(drawn, coords)],
            }
        )
    legend = [("oop", "out-of-place busbw", ""), ("ip", "in-place busbw", "5 3")]
    metrics = set(record.get("metric") for record in thresholds if record.get("pass") is not None)
    if "peak" in metrics or any(record.get("ranges") for record in thresholds):
        legend.append(("pass", "pass threshold", "8 4"))
    if any(record.get("expected") is not None and record.get("metric") != "avg" for record in thresholds):
        legend.append(("expected", "published", "1 3"))
    if avg is not None:
        legend.append(("avg", "measured average", "6 3"))
    if "avg" in metrics:
        legend.append(("avg_pass", "average threshold", "2 4"))
    x, y = left + 8, 14
    for key, text, dash in legend:
        needed = 36 + 6 * len(text)
        if x + needed > width - right:
            x, y = left + 8, y + 15
        plot["legend"].append({"x": x, "y": y, "color": COLORS[key], "dash": dash, "text": text})
        x += needed
    return plot


def margin_chart(margins):
    """Geometry of the fleet chart: one bar per item of MARGINS (in the order given: a cluster's lowest-margin check,
    build_report's ``margin``, or None) of its margin over its pass threshold, (value - pass) / pass, the threshold at
    0; a bar without a margin goes down from the threshold. Returns the SVG's size, bars (x, y, width, height), ticks
    and lines, numbers already formatted."""
    count = max(len(margins), 1)
    left, right, top, bottom = 66, 18, 30, 44
    plot_w = 1236 if count * 40 >= 1236 else max(560, count * 40)
    width, height = left + plot_w + right, 300
    plot_h = height - top - bottom
    measured = [margin["margin"] for margin in margins if margin]
    low, high = max(min(measured + [-0.1]), -1.0), max(measured + [0.1])
    step = nice_step(high - low)
    low, high = math.floor(low / step - 1e-9) * step, math.ceil(high / step + 1e-9) * step

    def py(margin):
        return top + (high - min(max(margin, low), high)) / (high - low) * plot_h

    zero = py(0.0)
    slot = float(plot_w) / count
    bar_w = min(slot * 0.8, 28.0)
    bars, warn_marks, unmeasured = [], [], 0
    for index, margin in enumerate(margins):
        x = left + index * slot + (slot - bar_w) / 2
        if margin is None:
            unmeasured += 1
            y, bar_h = zero, top + plot_h - zero
        else:
            y = py(max(margin["margin"], 0.0))
            bar_h = max(py(min(margin["margin"], 0.0)) - y, 1.0)
            if margin.get("warn") is not None:
                warn = (float(margin["warn"]) - margin["pass"]) / margin["pass"]
                if low <= warn <= high:
                    reach = min((slot - bar_w) / 2, 3.0)
                    warn_marks.append({"x1": num(x - reach), "x2": num(x + bar_w + reach), "y": num(py(warn))})
        bars.append({"x": num(x), "y": num(y), "width": "%.2f" % bar_w, "height": num(bar_h)})
    ticks = [{"y": num(py(value)), "label": "%+g%%" % round(value * 100, 6) if abs(value) > 1e-9 else "0%"} for value in tick_values(low, high, step)]
    below = sum(1 for margin in measured if margin < 0)
    return dict(
        frame(width, height, left, top, plot_w, plot_h),
        zero=num(zero),
        below_h=num(top + plot_h - zero),
        bars=bars,
        ticks=ticks,
        warn_marks=warn_marks,
        separator=num(left + unmeasured * slot) if unmeasured and unmeasured < len(margins) else "",
        unmeasured=unmeasured,
        unmeasured_x=num(left + unmeasured * slot / 2),
        below=below,
        above=len(measured) - below,
        label_x=left + plot_w // 2,
        label_y=height - 8,
        axis_y=top + plot_h // 2,
    )
