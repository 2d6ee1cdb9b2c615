#!/usr/bin/python3
"""Figures a reviewer accepts (plotting/README.md "Readable figures"): every figure kind, drawn from
fixture results built to be hard to lay out (eight policies, ladders of one policy, clustered points,
a narrow bandwidth range, three SLOs), is checked through matplotlib's own text bounding boxes:

- no two labels overlap (tick labels, point labels, titles, axis labels, legend entries);
- no legend covers a panel or a data point;
- one colour per policy and one marker per ladder, the same in every figure of a result directory;
- log axes have plain tick labels (0.5, 1, 2, 5), never "6×10⁰".

    /usr/bin/python3 tests/plotting/test_figure_layout.py
"""
import csv
import json
import math
import os
import shutil
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "plotting"))
import plot  # noqa: E402  (after the path)

SUMMARY_HEADER = plot.SUMMARY_COLUMNS + plot.SUMMARY_INTERVALS
# policy -> (KV share of fp16, quality): a family with ladders, planners, baselines, an oracle
POLICIES = {"text": (0.0, 1.0), "quant8": (0.5, 0.998), "fixed:cachegen:2": (0.14, 0.84),
            "cachegen": (0.13, 0.93), "cachegen:ladder=transform": (0.07, 0.95), "mpc": (0.12, 0.95),
            "mpc:ladder=transform": (0.06, 0.96), "oracle-dp": (0.1, 0.97)}
# Three real traces whose means lie within 15 % of each other (the main job's), and two contexts sets.
TRACE_SETS = {"fcc": 0.094, "norway-3g": 0.100, "lte": 0.108}
SLOS = (0.5, 1.0, 2.0)
LEVELS = [("cachegen:1", "cachegen", 4.9, 0.990), ("cachegen:2", "cachegen", 7.3, 0.975),
          ("cachegen:3", "cachegen", 10.8, 0.930), ("cachegen:ladder=transform:1", "cachegen:ladder=transform", 9.0, 0.985),
          ("cachegen:ladder=transform:2", "cachegen:ladder=transform", 13.0, 0.975),
          ("quant:bits=8", "quant:bits=8", 1.98, 0.998), ("quant:bits=4", "quant:bits=4", 3.9, 0.990),
          ("kivi:bits=2", "kivi:bits=2", 7.2, 0.973), ("zstd", "zstd", 1.12, 1.0)]


def ttft(share, gbps, slo, i):
    return 0.3 + share * 5.0 / gbps * 0.1 + 0.02 * i + 0.05 * slo


def make_result(directory, trace_inputs=None):
    """A result directory; `trace_inputs` (name -> inputs) as its config's trace sets, by default each
    set a different real trace."""
    os.makedirs(directory)
    trace_inputs = trace_inputs or {name: [f"traces/{name}/*"] for name in TRACE_SETS}
    with open(os.path.join(directory, "config.json"), "w") as f:
        json.dump({"name": "layout", "figures": [], "policies": list(POLICIES),
                   "traces": [{"name": name, "inputs": given, "scale": 10} for name, given in trace_inputs.items()]}, f)
    summary, runs = [], []
    for context_set in ("wikitext", "longchat"):
        for trace_set, gbps in TRACE_SETS.items():
            for p, (policy, (share, quality)) in enumerate(POLICIES.items()):
                for slo in SLOS:
                    values = [ttft(share, gbps, slo, i) for i in range(8)]
                    mean = sum(values) / len(values)
                    # Violation rates cluster near 0 % for the generous SLOs, as real sweeps do.
                    violation = 0.0 if slo == 2.0 else min(1.0, 0.02 * p / slo)
                    row = [context_set, trace_set, policy, slo, "", "single", "", 8, 8, 8, gbps, mean,
                           sorted(values)[4], max(values), violation, share * 1e6, quality - 0.002 * slo]
                    row += [mean * 0.95, mean * 1.05, row[12] * 0.95, row[12] * 1.05, row[13] * 0.95, row[13] * 1.05,
                            max(0.0, violation - 0.05), min(1.0, violation + 0.05)]
                    summary.append(row)
                    runs.append({"context_set": context_set, "trace_set": trace_set, "policy": policy, "slo_s": slo,
                                 "hardware": "", "workload": "single", "rate_per_s": None,
                                 "requests": [{"ttft_s": v, "completed": True} for v in values]})
    with open(os.path.join(directory, "summary.csv"), "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(SUMMARY_HEADER)
        writer.writerows(summary)
    with open(os.path.join(directory, "runs.jsonl"), "w") as f:
        for run in runs:
            f.write(json.dumps(run) + "\n")
    with open(os.path.join(directory, "levels.csv"), "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(plot.LEVELS_COLUMNS)
        for name, codec, ratio, quality in LEVELS:
            writer.writerow(["wikitext", "smollm2-135m", name, codec, 3, 768, 1e6 / ratio, 1e6 / ratio / 768, ratio,
                             quality, "", "", "", "", ""])
    return directory


def make_rd(directory):
    os.makedirs(directory)
    with open(os.path.join(directory, "rd.jsonl"), "w") as f:
        for codec, scale in (("cachegen", 1.0), ("transform:cal=x", 2.1), ("quant", 0.9), ("kivi", 1.2)):
            for kl in (0.002, 0.01, 0.05, 0.2):
                f.write(json.dumps({"codec": codec, "point": 1, "kl_mean": kl,
                                    "ratio_vs_fp16": scale * (3 + 2 * math.log10(kl * 1e4))}) + "\n")
            f.write(json.dumps({"codec": codec, "bd_rate_vs_cachegen": None if codec == "cachegen" else -0.3}) + "\n")
    return directory


def text_boxes(fig):
    """Every visible, non-empty text of the figure with its bounding box (display pixels)."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    texts = list(fig.texts)  # the suptitle among them
    for legend in fig.legends + [ax.get_legend() for ax in fig.axes if ax.get_legend()]:
        texts += legend.get_texts()
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        texts += ax.texts + [ax.title, ax.xaxis.label, ax.yaxis.label]
        for axis, coordinate in ((ax.xaxis, 0), (ax.yaxis, 1)):
            lo, hi = sorted(axis.get_view_interval())
            for minor in (False, True):  # those matplotlib draws: at a tick inside the view
                texts += [t for t in axis.get_ticklabels(minor=minor)
                          if lo - 1e-12 * abs(lo) <= t.get_position()[coordinate] <= hi + 1e-12 * abs(hi)]
    unique = list({id(t): t for t in texts}.values())
    return [(t.get_text(), t.get_window_extent(renderer)) for t in unique if t.get_visible() and t.get_text().strip()]


def overlapping(boxes, margin=0.5):
    pairs = []
    for i in range(len(boxes)):
        for j in range(i + 1, len(boxes)):
            (a, box_a), (b, box_b) = boxes[i], boxes[j]
            if (box_a.x0 + margin < box_b.x1 - margin and box_b.x0 + margin < box_a.x1 - margin and
                    box_a.y0 + margin < box_b.y1 - margin and box_b.y0 + margin < box_a.y1 - margin):
                pairs.append((a, b))
    return pairs


def legend_problems(fig):
    """A figure legend that overlaps a panel, or a panel's legend that covers one of its data points."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    problems = []
    panels = [ax for ax in fig.axes if ax.get_visible()]
    for legend in fig.legends:
        box = legend.get_window_extent(renderer)
        problems += [f"figure legend over panel {ax.get_title()!r}" for ax in panels
                     if box.overlaps(ax.get_window_extent(renderer))]
    for ax in panels:
        legend = ax.get_legend()
        if legend is None:
            continue
        box = legend.get_window_extent(renderer)
        for line in ax.get_lines():
            xy = line.get_xydata()
            if len(xy) == 0 or line.get_label() == "SLO":
                continue
            for x, y in ax.transData.transform(xy):
                if box.x0 < x < box.x1 and box.y0 < y < box.y1:
                    problems.append(f"legend of {ax.get_title()!r} covers a point of {line.get_label()!r}")
                    break
    return problems


class FigureLayout(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="kvstream-layout-")
        cls.result = plot.Result(make_result(os.path.join(cls.tmp, "result")))
        cls.rd = plot.Result(make_rd(os.path.join(cls.tmp, "rd")))

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def figures(self):
        for kind in ("size_quality", "ttft_vs_bandwidth", "violation_vs_quality", "ttft_cdf"):
            yield kind, plot.DRAW[kind](self.result)
        yield "rd", plot.DRAW["rd"](self.rd)

    def test_no_two_labels_overlap_and_no_legend_covers_data(self):
        for kind, fig in self.figures():
            with self.subTest(kind=kind):
                self.assertEqual(overlapping(text_boxes(fig)), [], kind)
                self.assertEqual(legend_problems(fig), [], kind)
            plot.plt.close(fig)

    def test_at_paper_widths_too(self):
        """At one column (3.33 in, panels stacked, legend below) and a page (7 in), with 8 pt fonts."""
        try:
            for width in plot.PAPER_WIDTHS:
                plot.use_width(width)
                for kind, fig in self.figures():
                    with self.subTest(kind=kind, width=width):
                        self.assertLessEqual(fig.get_size_inches()[0], plot.PAPER_WIDTHS[width] + 1e-9)
                        self.assertEqual(overlapping(text_boxes(fig)), [], f"{kind} at {width} width")
                        self.assertEqual(legend_problems(fig), [], f"{kind} at {width} width")
                    plot.plt.close(fig)
        finally:
            plot.use_width(None)

    def test_log_axes_have_plain_tick_labels(self):
        for kind, fig in self.figures():
            for text, _ in text_boxes(fig):
                self.assertNotIn("times", text, f"{kind}: tick label {text!r}")
                self.assertNotIn("×10", text, f"{kind}: tick label {text!r}")
                self.assertNotIn("$", text, f"{kind}: tick label {text!r}")
            plot.plt.close(fig)

    def test_one_colour_per_policy_and_one_marker_per_ladder_in_every_figure(self):
        seen = {}
        for kind in ("ttft_vs_bandwidth", "violation_vs_quality", "ttft_cdf"):
            fig = plot.DRAW[kind](self.result)
            for ax in fig.axes:
                for line in ax.get_lines():
                    policy = line.get_label().split(",")[0]
                    if policy not in POLICIES:
                        continue
                    style = (line.get_color(), line.get_marker() if kind != "ttft_cdf" else None)
                    colour = seen.setdefault(policy, style)[0]
                    self.assertEqual(line.get_color(), colour, f"{kind}: {policy}")
            plot.plt.close(fig)
        # A policy and its ladder variant share a colour and differ in marker.
        style = plot.PolicyStyle(POLICIES)
        self.assertEqual(style.colour("cachegen"), style.colour("cachegen:ladder=transform"))
        self.assertNotEqual(style.marker("cachegen"), style.marker("cachegen:ladder=transform"))
        self.assertEqual(style.marker("cachegen:ladder=transform"), style.marker("mpc:ladder=transform"))
        self.assertNotEqual(style.colour("mpc"), style.colour("cachegen"))

    def test_bandwidth_axis_needs_a_bandwidth_sweep(self):
        """Three different traces are not a bandwidth sweep: by default ttft_vs_bandwidth is not drawn,
        and when asked for, its points are not joined by lines."""
        self.assertNotIn("ttft_vs_bandwidth", plot.choose_kinds(self.result, None))
        fig = plot.DRAW["ttft_vs_bandwidth"](self.result)
        for ax in fig.axes:
            for line in ax.get_lines():
                if line.get_label().split(",")[0] in POLICIES:
                    self.assertEqual(line.get_linestyle(), "None", line.get_label())
        plot.plt.close(fig)

    def test_constant_rate_trace_sets_are_the_bandwidth_axis(self):
        """Two constant-rate sets beside a real trace: the figure is drawn over the two, joined."""
        result = plot.Result(make_result(os.path.join(self.tmp, "mixed"), {
            "fcc": ["constant:gbps=0.094"], "norway-3g": ["traces/pensieve_norway3g/*"], "lte": ["constant:gbps=0.108"]}))
        self.assertEqual(result.bandwidth_axis, {"fcc", "lte"})
        self.assertIn("ttft_vs_bandwidth", plot.choose_kinds(result, None))
        fig = plot.DRAW["ttft_vs_bandwidth"](result)
        lines = [line for ax in fig.axes for line in ax.get_lines() if line.get_label().split(",")[0] in POLICIES]
        self.assertTrue(lines)
        for line in lines:
            self.assertEqual(len(line.get_xdata()), 2, line.get_label())
            self.assertNotEqual(line.get_linestyle(), "None", line.get_label())
        self.assertEqual(overlapping(text_boxes(fig)), [])
        plot.plt.close(fig)


if __name__ == "__main__":
    unittest.main()
