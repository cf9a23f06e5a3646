# -*- coding: utf-8 -*-
# Copyright (c) gpufleet.burnin contributors
# Apache License 2.0 (see LICENSE)
"""The HTML report's sibling pictures: per SKU and metric a strip plot of this run's nodes (or GPUs) along the
metric's axis, the baseline, the rule's limit and the fixed floor drawn, the nodes beyond the rule marked and linked
to their node's row; and the fleet-wide drift table. Geometry only: templates/reports/_siblings.html.j2 draws it.
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import zlib

WIDTH, HEIGHT = 680, 130
LEFT, RIGHT, TOP, BOTTOM = 20, 20, 22, 34
# At most this many points a plot (a large fleet's GPUs): the beyond-the-rule ones always, then the lowest.
MAX_POINTS = 2000


def _x_of(low, high):
    span = (high - low) or 1.0

    def x(value):
        return round(LEFT + (value - low) / span * (WIDTH - LEFT - RIGHT), 2)

    return x


def strip_plot(record, node_href):
    """The geometry of one baseline record (judging/siblings.py judge()'s ``baselines`` item). NODE_HREF(cluster,
    node) is the anchor of the node's row."""
    rows = [row for row in record["nodes"] if isinstance(row.get("value"), (int, float))]
    rows.sort(key=lambda row: (row.get("verdict") in (None, "pass"), row["value"]))
    rows = rows[:MAX_POINTS]
    values = [row["value"] for row in rows]
    base, rule, floor = record.get("baseline"), record.get("rule"), record.get("floor")
    limit = base * (1 - rule / 100.0) if base is not None and rule is not None else None
    marks = [value for value in values + [base, limit, floor] if isinstance(value, (int, float))]
    low, high = (min(marks), max(marks)) if marks else (0.0, 1.0)
    pad = (high - low) * 0.05 or max(abs(high) * 0.05, 1.0)
    low, high = low - pad, high + pad
    x = _x_of(low, high)
    points = []
    for row in rows:
        # A deterministic jitter (from the sample's name) spreads equal values apart; the y says nothing.
        jitter = zlib.crc32(("%s/%s" % (row["cluster"], row.get("sample") or row["node"])).encode("utf-8")) % 1000 / 1000.0
        outlier = row.get("verdict") in ("warn", "fail")
        what = row["node"] if row.get("gpu") is None else "%s GPU %s" % (row["node"], row["gpu"])
        points.append(
            {
                "x": x(row["value"]),
                "y": round(TOP + 8 + jitter * (HEIGHT - TOP - BOTTOM - 16), 2),
                "r": 5 if outlier else 3,
                "verdict": row.get("verdict") or "none",
                "outlier": outlier,
                "value": row["value"],
                "node": row["node"],
                "cluster": row["cluster"],
                "href": "#" + node_href(row["cluster"], row["node"]),
                "title": "%s/%s: %.1f %s%s"
                % (row["cluster"], what, row["value"], record["unit"], (", %+.1f %% vs baseline" % row["distance"]) if row.get("distance") is not None else ""),
            }
        )
    lines = []
    # Labels on three rows so that close lines stay readable: baseline above, the limit inside, the floor below.
    rows_y = {"baseline": TOP - 6, "limit": TOP + 10, "floor": HEIGHT - BOTTOM - 4}
    for kind, value, label in (
        ("baseline", base, "baseline %.1f" % base if base is not None else ""),
        ("limit", limit, "rule -%g %%" % rule if rule is not None else ""),
        ("floor", floor, "fixed floor %.1f" % floor if floor is not None else ""),
    ):
        if isinstance(value, (int, float)):
            lines.append({"kind": kind, "x": x(value), "value": round(value, 3), "label": label, "label_y": rows_y[kind]})
    ticks = [{"x": x(low + (high - low) * step / 4.0), "label": "%.0f" % (low + (high - low) * step / 4.0)} for step in range(5)]
    return {
        "id": "siblings-%s-%s" % (_slug(record["sku"]), _slug(record["metric"])),
        "title": "%s, SKU %s: %d sample(s)%s"
        % (record["label"], record["sku"], record["count"], ", %d from earlier runs" % record["earlier"] if record.get("earlier") else ""),
        "note": record.get("note") or "",
        "judged": record.get("judged"),
        "unit": record["unit"],
        "width": WIDTH,
        "height": HEIGHT,
        "top": TOP,
        "axis_y": HEIGHT - BOTTOM,
        "points": points,
        "lines": lines,
        "ticks": ticks,
        "outliers": [point for point in points if point["outlier"]],
    }


def _slug(text):
    return "".join(char if char.isalnum() else "-" for char in str(text).lower()).strip("-")


def drift_rows(drifted, node_href):
    """The fleet-wide drift table: every drifting node with its link."""
    return [dict(row, href="#" + node_href(row["cluster"], row["node"])) for row in (drifted or {}).get("nodes") or []]


__all__ = ["drift_rows", "strip_plot"]
