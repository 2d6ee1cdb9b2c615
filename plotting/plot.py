#!/usr/bin/python3
"""Draw the figures of a kvstream result directory (plotting/README.md).

    /usr/bin/python3 plotting/plot.py RESULT_DIR [--figures kind,kind,...] [--format png,svg,pdf]

Reads RESULT_DIR/{config.json, summary.csv, runs.jsonl (or runs.jsonl.zst), levels.csv}, or the fidelity.jsonl that
`kvstream fidelity` writes, or the rd.jsonl that `kvstream rd --out` writes, and writes
RESULT_DIR/figures/<kind>.<format> for each kind and format (default png and svg), printing one line
per file written. `kvstream plot` runs it.
Exit status 0 on success, 2 on bad input (message on stderr, no traceback).
"""
import argparse
import csv
import json
import math
import io
import os
import shutil
import subprocess
import sys
import tempfile
from collections import defaultdict
from functools import cached_property

try:
    import matplotlib
except ImportError:
    print(f"plot.py: error: matplotlib is not importable by {sys.executable}; run /usr/bin/python3 plotting/plot.py",
          file=sys.stderr)
    sys.exit(2)
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the backend)
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullFormatter  # noqa: E402

matplotlib.rcParams["svg.hashsalt"] = "kvstream"  # the same input gives the same SVG

SUMMARY_COLUMNS = ["context_set", "trace_set", "policy", "slo_s", "hardware", "workload", "rate_per_s", "runs",
                   "requests", "completed", "trace_mean_gbps", "mean_ttft_s", "p50_ttft_s", "p95_ttft_s",
                   "slo_violation_rate", "mean_bytes", "mean_quality"]
SUMMARY_TEXT = {"context_set", "trace_set", "policy", "hardware", "workload"}
# 95 % intervals (summary.csv from kvstream run since it has them; older directories have none).
SUMMARY_INTERVALS = [f"{stat}_ci95_{end}" for stat in ("mean_ttft_s", "p50_ttft_s", "p95_ttft_s", "slo_violation_rate")
                     for end in ("lo", "hi")]
LEVELS_COLUMNS = ["context_set", "model", "level", "codec", "contexts", "tokens", "bytes", "bytes_per_token",
                  "ratio_vs_fp16", "quality", "ppl_ref", "ppl", "kl_mean", "encode_mb_per_s", "decode_mb_per_s"]
LEVELS_TEXT = {"context_set", "model", "level", "codec"}

MAX_VIOLATION_PANELS = 6  # more trace sets than this are pooled into one panel
MAX_CDF_PANELS = 4        # SLOs shown by ttft_cdf
SLO_STYLES = ["-", "--", ":", "-."]


class PlotError(Exception):
    """Bad input: reported on stderr as one line, exit status 2."""


# ---------------------------------------------------------------- reading the result directory

def parse_number(text, where, column):
    """A CSV field as a float (inf and nan allowed); None when the field is empty."""
    text = text.strip()
    if not text:
        return None
    try:
        return float(text)
    except ValueError:
        raise PlotError(f"{where}: column {column}: not a number: {text!r}") from None


def read_csv(path, columns, text_columns, optional_numbers=()):
    """The rows of a CSV file as dicts; every column not in text_columns is parsed as a number, and so
    are the optional_numbers columns the header has."""
    with open(path, newline="") as f:
        reader = csv.reader(f)
        header = next(reader, None)
        if header is None:
            return []
        missing = [c for c in columns if c not in header]
        if missing:
            raise PlotError(f"{path}:1: header lacks column(s) {', '.join(missing)}")
        numbers = [c for c in columns if c not in text_columns] + [c for c in optional_numbers if c in header]
        rows = []
        try:
            for fields in reader:
                where = f"{path}:{reader.line_num}"
                if not fields:
                    continue  # blank line
                if len(fields) != len(header):
                    raise PlotError(f"{where}: {len(fields)} fields, the header has {len(header)}")
                row = dict(zip(header, fields))
                for column in numbers:
                    row[column] = parse_number(row[column], where, column)
                rows.append(row)
        except csv.Error as e:
            raise PlotError(f"{path}:{reader.line_num}: {e}") from None
    return rows


def is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


NETWORK_KEYS = ["link_model", "rtt_ms", "queue", "congestion_control", "slow_start_after_idle"]


def network_path(row):
    """A row's network path in a few words ("tcp 20 ms shallow cubic"), or None for results of a
    config without a network section. Rows of summary.csv hold text, runs.jsonl objects JSON values."""
    if row.get("link_model") in (None, ""):
        return None
    link = link_words(row)
    return " ".join([link[0], f"{rtt_text(row)} ms", *link[1:]])


def rtt_text(row):
    rtt = row.get("rtt_ms")
    return f"{float(rtt):g}" if rtt not in (None, "") else "?"


def link_words(row):
    """The path without its round trip: link model, queue, congestion control, "no restart"."""
    words = [str(row["link_model"])]
    words += [str(row[key]) for key in ("queue", "congestion_control") if row.get(key) not in (None, "")]
    if row.get("slow_start_after_idle") in (False, "false"):
        words.append("no restart")
    return words


def label_network_paths(rows):
    """Results that sweep network paths: each path its own series, named in the policy's label
    ("mpc · tcp 20 ms shallow cubic"), so that no figure pools runs of different paths. The row keeps
    the policy alone under "policy_only", and the path split into its round trip ("rtt_label", a
    panel of ttft_vs_bandwidth) and the rest ("link_label": "fluid", "tcp shallow cubic")."""
    if rows and len({network_path(r) for r in rows}) > 1:
        for row in rows:
            path = network_path(row)
            row["policy_only"] = row["policy"]
            row["rtt_label"] = f"RTT {rtt_text(row)} ms"
            row["link_label"] = " ".join(link_words(row))
            row["policy"] = f"{row['policy']} · {path}"
    return rows


def run_ttfts(run, where):
    """From one runs.jsonl object: its policy, SLO, workload and per-request TTFTs (s; +inf when not
    completed)."""
    if not isinstance(run, dict):
        raise PlotError(f"{where}: expected a JSON object")
    policy, slo, requests = run.get("policy"), run.get("slo_s"), run.get("requests")
    if not isinstance(policy, str):
        raise PlotError(f"{where}: \"policy\" must be a string")
    if slo is not None and not is_number(slo):
        raise PlotError(f"{where}: \"slo_s\" must be a number or null")
    if not isinstance(requests, list) or not all(isinstance(r, dict) for r in requests):
        raise PlotError(f"{where}: \"requests\" must be a list of objects")
    ttfts = []
    for request in requests:
        ttft = request.get("ttft_s")
        if ttft is not None and not is_number(ttft):
            raise PlotError(f"{where}: \"ttft_s\" must be a number or null")
        ttfts.append(float(ttft) if request.get("completed") is True and ttft is not None else math.inf)
    reduced = {"policy": policy, "slo_s": None if slo is None else float(slo), "workload": run.get("workload"),
               "ttfts": ttfts}
    reduced.update({key: run[key] for key in NETWORK_KEYS if key in run})
    return reduced


def zstd_text_lines(path):
    """The lines of a zstd-compressed text file (runs.jsonl.zst: a sequence of frames), decompressed as
    they are read: by the zstandard module when importable, else by the zstd program."""
    try:
        import zstandard
    except ImportError:
        zstandard = None
    if zstandard is not None:
        with open(path, "rb") as raw:
            reader = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True)
            try:
                yield from io.TextIOWrapper(reader, encoding="utf-8")
            except zstandard.ZstdError as e:
                raise PlotError(f"{path}: not a complete zstd file: {e}") from None
        return
    program = shutil.which("zstd")
    if program is None:
        raise PlotError(f"{path}: reading a .zst file needs the python3 zstandard module or the zstd program "
                        "(scripts/setup.sh installs zstd); or decompress it: zstd -d " + path)
    with subprocess.Popen([program, "-dcq", "--", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE) as zstd:
        yield from io.TextIOWrapper(zstd.stdout, encoding="utf-8")
        # zstd's last message, without the (shortened) file name it starts with
        error = zstd.stderr.read().decode(errors="replace").replace("\r", "\n").strip().split("\n")[-1].split(" : ", 1)[-1]
    if zstd.returncode != 0:
        raise PlotError(f"{path}: not a complete zstd file (zstd -d: {error or f'exit status {zstd.returncode}'})")


def text_lines(path):
    """The lines of a text file, decompressed when its name ends in .zst."""
    if path.endswith(".zst"):
        yield from zstd_text_lines(path)
        return
    with open(path) as f:
        yield from f


def json_lines(path):
    """Each object of a JSON-lines file with where it came from ("path:line"); blank lines are skipped."""
    for number, line in enumerate(text_lines(path), 1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            yield json.loads(line), where
        except json.JSONDecodeError as e:
            raise PlotError(f"{where}: bad JSON: {e.msg}") from None


def read_runs(path):
    """runs.jsonl reduced to what the figures need (see run_ttfts), network paths labelled."""
    return label_network_paths([run_ttfts(run, where) for run, where in json_lines(path)])


def read_fidelity(path):
    """fidelity.jsonl reduced to each link model's signed errors: {model: {"ttft": [...], "chunk": [...]}}."""
    errors = defaultdict(lambda: {"ttft": [], "chunk": []})
    for run, where in json_lines(path):
        try:
            for model, simulated in run["simulated"].items():
                for kind in ("ttft", "chunk"):
                    values = simulated[f"{kind}_errors"]
                    if not all(is_number(v) for v in values):
                        raise PlotError(f"{where}: simulated.{model}.{kind}_errors: expected numbers")
                    errors[model][kind].extend(float(v) for v in values)
        except (KeyError, TypeError, AttributeError) as e:
            raise PlotError(f"{where}: not a fidelity run (missing or bad {e})") from None
    return dict(errors)


def read_rd(path):
    """rd.jsonl reduced to its curves: {codec: {"points": [(kl_mean, ratio_vs_fp16), ...], "bd_rate": x or None}}.
    Point lines have "point", curve lines "bd_rate_vs_cachegen"."""
    curves = defaultdict(lambda: {"points": [], "bd_rate": None})
    for line, where in json_lines(path):
        try:
            codec = line["codec"]
            if not isinstance(codec, str):
                raise TypeError("codec")
            if "point" in line:
                kl, ratio = line["kl_mean"], line["ratio_vs_fp16"]
                if not (is_number(kl) and is_number(ratio)):
                    raise TypeError("kl_mean or ratio_vs_fp16")
                curves[codec]["points"].append((float(kl), float(ratio)))
            else:
                bd = line["bd_rate_vs_cachegen"]
                if bd is not None and not is_number(bd):
                    raise TypeError("bd_rate_vs_cachegen")
                curves[codec]["bd_rate"] = bd
        except (KeyError, TypeError, AttributeError) as e:
            raise PlotError(f"{where}: not an rd line (missing or bad {e})") from None
    return dict(curves)


def read_config(path):
    """config.json as a dict."""
    try:
        with open(path) as f:
            config = json.load(f)
    except json.JSONDecodeError as e:
        raise PlotError(f"{path}:{e.lineno}: bad JSON: {e.msg}") from None
    if not isinstance(config, dict):
        raise PlotError(f"{path}: expected a JSON object")
    return config


class Result:
    """A result directory; each input file is read on first use (None when the file is absent)."""

    def __init__(self, directory):
        if not os.path.exists(directory):
            raise PlotError(f"{directory}: no such directory")
        if not os.path.isdir(directory):
            raise PlotError(f"{directory}: not a directory")
        self.directory = directory

    def path(self, name):
        return os.path.join(self.directory, name)

    def _read_if_present(self, name, reader, *args):
        path = self.path(name)
        if not os.path.exists(path):
            return None
        try:
            return reader(path, *args)
        except UnicodeDecodeError as e:
            raise PlotError(f"{path}: not UTF-8 text: {e.reason} at byte {e.start}") from None

    @cached_property
    def config(self):
        return self._read_if_present("config.json", read_config) or {}

    @cached_property
    def name(self):
        """The experiment's name (config.json "name", else the directory's name)."""
        return str(self.config.get("name") or os.path.basename(os.path.abspath(self.directory)))

    @cached_property
    def summary(self):
        rows = self._read_if_present("summary.csv", read_csv, SUMMARY_COLUMNS, SUMMARY_TEXT, SUMMARY_INTERVALS)
        return None if rows is None else label_network_paths(rows)

    @cached_property
    def levels(self):
        return self._read_if_present("levels.csv", read_csv, LEVELS_COLUMNS, LEVELS_TEXT)

    @cached_property
    def runs_file(self):
        """runs.jsonl, or runs.jsonl.zst where only that exists (kvstream run --compress-runs)."""
        compressed = "runs.jsonl.zst"
        return compressed if os.path.exists(self.path(compressed)) and not os.path.exists(self.path("runs.jsonl")) \
            else "runs.jsonl"

    @cached_property
    def runs(self):
        return self._read_if_present(self.runs_file, read_runs)

    @cached_property
    def fidelity(self):
        return self._read_if_present("fidelity.jsonl", read_fidelity)

    @cached_property
    def rd(self):
        return self._read_if_present("rd.jsonl", read_rd)

    @cached_property
    def style(self):
        """One PolicyStyle for every figure of the directory: the config's policies in its order, then
        any other policy its summary holds."""
        configured = self.config.get("policies")
        names = [p for p in configured if isinstance(p, str)] if isinstance(configured, list) else []
        names += sorted({r.get("policy_only", r["policy"]) for r in self.summary or []})
        # Paths in the order the grid made them (the config's).
        paths = dict.fromkeys(r["policy"].partition(" · ")[2] for r in self.summary or [] if " · " in r["policy"])
        return PolicyStyle(names, paths)

    @cached_property
    def bandwidth_axis(self):
        """The trace sets that form one bandwidth axis: those at a constant rate (when there are two or
        more), or all of them when they are the same traces at different scales; an empty set when
        none do (different traces at similar means are not an axis: a line from a 3G trace to an LTE
        one says nothing about bandwidth). None without the config's trace sets (older directories):
        every set, as before."""
        traces = self.config.get("traces")
        if not isinstance(traces, list) or not traces:
            return None
        inputs = {}
        for entry in traces:
            if isinstance(entry, dict) and isinstance(entry.get("name"), str):
                given = entry.get("inputs")
                inputs[entry["name"]] = tuple(given) if isinstance(given, list) else (str(given),)
        constant = {name for name, given in inputs.items() if all(str(i).startswith("constant:") for i in given)}
        if len(constant) >= 2:
            return constant
        return set(inputs) if len(inputs) >= 2 and len(set(inputs.values())) == 1 else set()


# ---------------------------------------------------------------- shared helpers

def finite(value):
    return value is not None and math.isfinite(value)


def slo_order(slo):
    """Sort key for SLO values, None (no SLO) last."""
    return (slo is None, slo or 0.0)


def slo_text(slo):
    return "no SLO" if slo is None else f"SLO {slo:g} s"


def single_requests(rows):
    """The rows (summary rows or runs) of the single-request workload when there are any, else all rows:
    the figures that are not about load should not mix in queueing under a poisson workload."""
    return [r for r in rows if r["workload"] == "single"] or rows


def weighted_mean(rows, field):
    """Mean of row[field] over rows, weighted by row["runs"]; non-finite values are skipped (nan if none)."""
    pairs = [(r[field], r["runs"]) for r in rows if finite(r[field]) and finite(r["runs"])]
    total = sum(w for _, w in pairs)
    return sum(v * w for v, w in pairs) / total if total > 0 else math.nan


def interval(group, field):
    """The 95 % interval (lo, hi) of the point weighted_mean(group, field): a one-row point's own
    interval from summary.csv; for a pooled point, the runs-weighted mean of independent group
    estimates, whose standard error combines the groups' (each read as half its interval's width over
    1.96, a normal approximation). (nan, nan) when a pooled row lacks an interval (older summaries)."""
    rows = [r for r in group if finite(r[field]) and finite(r["runs"])]
    bounds = [(r.get(f"{field}_ci95_lo"), r.get(f"{field}_ci95_hi")) for r in rows]
    if not rows or not all(finite(lo) and finite(hi) for lo, hi in bounds):
        return math.nan, math.nan
    if len(rows) == 1:
        return bounds[0]
    total = sum(r["runs"] for r in rows)
    error = math.sqrt(sum((r["runs"] * (hi - lo) / 2) ** 2 for r, (lo, hi) in zip(rows, bounds))) / total
    centre = weighted_mean(rows, field)
    low, high = (0.0, 1.0) if field == "slo_violation_rate" else (-math.inf, math.inf)
    return max(centre - error, low), min(centre + error, high)


def pool(rows, key, fields):
    """Groups rows by key(row); per group the runs-weighted mean of each field, and its 95 % interval
    under (field, "ci") (see interval()). Returns ({key: {field: mean, (field, "ci"): (lo, hi)}}, the largest
    number of rows pooled into one group)."""
    groups = defaultdict(list)
    for row in rows:
        groups[key(row)].append(row)
    means = {k: {**{f: weighted_mean(group, f) for f in fields}, **{(f, "ci"): interval(group, f) for f in fields}}
             for k, group in groups.items()}
    return means, max((len(g) for g in groups.values()), default=0)


def error_bars(ax, points, colour, horizontal=False):
    """95 % intervals of points (x, y, (lo, hi)) as bars, vertical (on y) or horizontal (on x); points
    without a finite interval get none."""
    shown = [(x, y, lo, hi) for x, y, (lo, hi) in points if finite(lo) and finite(hi)]
    if not shown:
        return
    xs, ys, los, his = zip(*shown)
    centres = xs if horizontal else ys
    spans = [[max(c - lo, 0) for c, lo in zip(centres, los)], [max(hi - c, 0) for c, hi in zip(centres, his)]]
    ax.errorbar(xs, ys, xerr=spans if horizontal else None, yerr=None if horizontal else spans, fmt="none",
                ecolor=colour, elinewidth=0.8, capsize=2, alpha=0.7)


def pooled_note(largest):
    return f"\n(each point: runs-weighted mean of up to {largest} groups)" if largest > 1 else ""


def colours(names):
    """A fixed colour per name, the same in every panel."""
    cmap = plt.get_cmap("tab10")
    return {name: cmap(i % 10) for i, name in enumerate(sorted(names))}


MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]


def policy_parts(policy):
    """A policy spec split into (the policy without its ladder, the ladder): "mpc:ladder=transform,text=0"
    gives ("mpc:text=0", "transform"); a spec without ladder= (and fixed:<level>) has ladder ""."""
    name, _, options = policy.partition(":")
    if name == "fixed" or not options:
        return policy, ""
    kept, ladder = [], ""
    for option in options.split(","):
        if option.startswith("ladder="):
            ladder = option[len("ladder="):]
        else:
            kept.append(option)
    return name + (":" + ",".join(kept) if kept else ""), ladder


class PolicyStyle:
    """How a result directory draws its series, the same in every figure: one colour per policy (its
    spec without the ladder option, so that "cachegen" and "cachegen:ladder=transform" are one family),
    one marker per ladder (the default ladder first) and, in results that sweep network paths, one
    line style per path. `policies` and `paths` in the order to number them (the config's). A series
    label is a policy, or "policy · path" (label_network_paths)."""

    def __init__(self, policies, paths=()):
        families = list(dict.fromkeys(policy_parts(p)[0] for p in policies))
        ladders = list(dict.fromkeys([""] + [policy_parts(p)[1] for p in policies]))
        cmap = plt.get_cmap("tab10" if len(families) <= 10 else "tab20")
        self._colour = {f: cmap(i % cmap.N) for i, f in enumerate(families)}
        self._marker = {ladder: MARKERS[i % len(MARKERS)] for i, ladder in enumerate(ladders)}
        self._line = {path: SLO_STYLES[i % len(SLO_STYLES)] for i, path in enumerate(dict.fromkeys(paths))}

    @staticmethod
    def policy(label):
        return label.partition(" · ")[0]

    def colour(self, label):
        return self._colour.get(policy_parts(self.policy(label))[0], "grey")

    def marker(self, label):
        return self._marker.get(policy_parts(self.policy(label))[1], "o")

    def line(self, label):
        return self._line.get(label.partition(" · ")[2], "-")

    def path_handles(self):
        """Legend entries for the paths' line styles (none with one path)."""
        return [Line2D([], [], color="grey", linestyle=line, label=path) for path, line in self._line.items()
                if len(self._line) > 1]


# Paper widths (inches) that --width names: one column and the whole page of a two-column paper
# (ACM and IEEE templates: 3.33 and 7.0). None: 4.8 inches per panel, for the screen.
PAPER_WIDTHS = {"column": 3.33, "page": 7.0}
FIGURE = {"width_in": None}


def use_width(name):
    """Draws the next figures at a paper width (a PAPER_WIDTHS name) with fonts of a paper's size
    (8 pt), or at screen size (None)."""
    FIGURE["width_in"] = PAPER_WIDTHS[name] if name else None
    matplotlib.rcParams.update({"font.size": 8 if name else 10, "axes.titlesize": 8 if name else "large",
                                "figure.titlesize": 8 if name else "large", "legend.fontsize": 7 if name else "medium",
                                "xtick.labelsize": 7 if name else "medium", "ytick.labelsize": 7 if name else "medium",
                                "lines.markersize": 4 if name else 6, "lines.linewidth": 1.2 if name else 1.5})


def panel_grid(count, title, sharey=False):
    """A figure with `count` panels (at most 3 per row, 2x2 for 4; at a column's width one per row) and a
    suptitle; returns (figure, list of axes). With count 0 the figure holds one panel saying there is no
    data, and the list is empty. `sharey`: one y range for every panel (facets of one measure are
    compared across panels)."""
    width_in = FIGURE["width_in"]
    ncols = 1 if width_in and width_in < 5 else 2 if count == 4 else min(max(count, 1), 3)
    nrows = math.ceil(max(count, 1) / ncols)
    panel_in = width_in / ncols if width_in else 4.8
    figsize = (panel_in * ncols, (0.7 if width_in else 0.8125) * panel_in * nrows)
    fig, axes = plt.subplots(nrows, ncols, figsize=figsize, squeeze=False, layout="constrained", sharey=sharey)
    axes = list(axes.ravel())
    if count == 0:
        mark_if_empty(axes[0], False)
    for ax in axes[max(count, 1):]:
        ax.set_visible(False)
    fig.suptitle(title)
    return fig, axes[:count]


def figure_legend(fig, axes, extra=()):
    """One legend, right of the panels (below them at a paper width), holding each distinct label of the
    axes once, then `extra` handles."""
    entries = {}
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            entries.setdefault(label, handle)
    handles = list(entries.values()) + list(extra)
    if handles and FIGURE["width_in"]:  # a paper's width is fixed: the legend goes below the panels
        fig.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.0), frameon=False,
                   ncol=1 if FIGURE["width_in"] < 5 else 2)
    elif handles:
        fig.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)


def mark_if_empty(ax, plotted):
    if not plotted:
        ax.text(0.5, 0.5, "no finite data", transform=ax.transAxes, ha="center", va="center", color="grey")


def plain_log_ticks(axis, data_range):
    """A log axis ticked at 1-2-5 steps with plain labels (0.5, 1, 2, 5), minor ticks unlabelled; a data
    range that holds fewer than two such steps is ticked at its two ends instead, so a narrow range
    still has a scale. Labels have at most 3 significant digits."""
    lo, hi = (float(v) for v in data_range)
    steps = [m * 10.0 ** e for e in range(-12, 13) for m in (1, 2, 5)]
    inside = [v for v in steps if lo <= v <= hi] if finite(lo) and finite(hi) and lo > 0 else []
    if len(inside) >= 2 or not (finite(lo) and finite(hi) and 0 < lo < hi):
        axis.set_major_locator(LogLocator(base=10, subs=(1, 2, 5)))
    else:
        axis.set_major_locator(FixedLocator([lo, hi]))
    axis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:.3g}"))
    axis.set_minor_formatter(NullFormatter())


def declutter(fig):
    """Hides every point label (an axes' annotation) that would overlap a label kept before it, the
    panel's title or its tick labels, or leave the figure: labels are placed in the order they were added, so the first of
    a pile stays readable. Annotations stay out of the layout, which therefore does not move after."""
    for ax in fig.axes:
        for text in ax.texts:
            text.set_in_layout(False)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    for ax in fig.axes:
        taken = [ax.title.get_window_extent(renderer)] if ax.title.get_text() else []
        for axis in (ax.xaxis, ax.yaxis):
            taken += [t.get_window_extent(renderer) for t in axis.get_ticklabels() if t.get_visible() and t.get_text()]
        for text in ax.texts:
            box = text.get_window_extent(renderer)
            outside = box.x0 < fig.bbox.x0 or box.x1 > fig.bbox.x1 or box.y0 < fig.bbox.y0 or box.y1 > fig.bbox.y1
            if outside or any(box.overlaps(other) for other in taken):
                text.set_visible(False)
            else:
                taken.append(box)


def finish_panel(ax, title, plotted, missing, xlabel, ylabel, log_x=False):
    """Sets a panel's title, axis labels, x scale and grid. The title names the series that have rows
    in the panel but no finite value (e.g. a policy that completed no request); a panel where nothing
    was plotted is marked empty."""
    mark_if_empty(ax, plotted)
    if plotted and missing:
        title += "\nno finite value: " + ", ".join(dict.fromkeys(missing))
    ax.set_title(title)
    if log_x:
        ax.set_xscale("log")
        plain_log_ticks(ax.xaxis, ax.dataLim.intervalx)
    ax.set_xlabel(xlabel)
    shares_y = len(ax.get_shared_y_axes().get_siblings(ax)) > 1
    if not (shares_y and ax.get_subplotspec() and not ax.get_subplotspec().is_first_col()):
        ax.set_ylabel(ylabel)  # panels that share a y range name it once per row
    ax.grid(alpha=0.3, which="both" if log_x else "major")


# ---------------------------------------------------------------- one function per figure kind

def draw_size_quality(result):
    """levels.csv: compression ratio vs fp16 (x, ×) against quality, the top-1 agreement of next-token
    predictions with the original KV (y, %); one line per codec through its levels (its rate-distortion
    curve), each point labelled with its level number where labels fit; one panel per (context_set,
    model), one y range for all."""
    panels = sorted({(r["context_set"], r["model"]) for r in result.levels})
    codecs = list(dict.fromkeys(r["codec"] for r in result.levels))
    codec_colour = colours(codecs)
    codec_marker = {codec: MARKERS[i % len(MARKERS)] for i, codec in enumerate(sorted(codecs))}
    fig, axes = panel_grid(len(panels), f"{result.name}: KV size vs quality per level", sharey=True)
    for ax, (context_set, model) in zip(axes, panels):
        rows = [r for r in result.levels if (r["context_set"], r["model"]) == (context_set, model)]
        shown = [r for r in rows if finite(r["ratio_vs_fp16"]) and finite(r["quality"])]
        missing = [r["level"] for r in rows if not (finite(r["ratio_vs_fp16"]) and finite(r["quality"]))]
        for codec in sorted({r["codec"] for r in shown}):
            # A codec's levels as its rate-distortion curve, each point named by its level number.
            points = sorted((r["ratio_vs_fp16"], 100 * r["quality"], r["level"]) for r in shown if r["codec"] == codec)
            ax.plot([x for x, _, _ in points], [y for _, y, _ in points], color=codec_colour[codec],
                    marker=codec_marker[codec], label=codec, zorder=3)
            for x, y, level in points if len(points) > 1 else []:
                ax.annotate(level.rpartition(":")[2], (x, y), xytext=(4, 4), textcoords="offset points", fontsize=7,
                            color=codec_colour[codec])
        finish_panel(ax, f"{context_set} ({model})" if model else context_set, bool(shown), missing,
                     "compression ratio vs fp16 (×)", "quality: top-1 agreement (%)", log_x=True)
    figure_legend(fig, axes)
    declutter(fig)
    return fig


def draw_ttft_vs_bandwidth(result):
    """summary.csv: mean trace bandwidth (x, Gbps, log scale) against mean TTFT (y, s); one line per policy
    (per policy and SLO when there are several SLOs; colour = policy, marker = ladder, line style = SLO);
    one panel per (context_set, hardware). Points are joined only along a real bandwidth axis
    (Result.bandwidth_axis: its trace sets only). Uses the single-request rows when there are any (single_requests); rows that
    share a point (e.g. trace sets of equal mean bandwidth) are averaged weighted by runs."""
    rows = [r for r in single_requests(result.summary) if finite(r["trace_mean_gbps"]) and r["trace_mean_gbps"] > 0]
    axis = result.bandwidth_axis
    joined = axis is None or bool(axis)
    if axis:
        rows = [r for r in rows if r["trace_set"] in axis]
    if rows and "link_label" in rows[0]:
        return draw_ttft_vs_bandwidth_by_path(result, rows)
    slos = sorted({r["slo_s"] for r in rows}, key=slo_order)
    policies = sorted({r["policy"] for r in rows})
    style = result.style
    means, largest = pool(rows, lambda r: (r["context_set"], r["hardware"], r["policy"], r["slo_s"],
                                           r["trace_mean_gbps"]), ["mean_ttft_s"])
    panels = sorted({(r["context_set"], r["hardware"]) for r in rows})
    title = f"{result.name}: TTFT vs bandwidth{pooled_note(largest)}"
    if not joined:
        title += "\n(different traces, not a bandwidth sweep: points not joined)"
    elif axis and len(axis) < len({r["trace_set"] for r in single_requests(result.summary)}):
        title += f"\n(the {len(axis)} constant-rate trace sets)"
    fig, axes = panel_grid(len(panels), title, sharey=True)
    for ax, (context_set, hardware) in zip(axes, panels):
        plotted, missing = False, []
        for policy in policies:
            for i, slo in enumerate(slos):
                series = [(gbps, m["mean_ttft_s"], m[("mean_ttft_s", "ci")]) for (c, h, p, s, gbps), m in means.items()
                          if (c, h, p, s) == (context_set, hardware, policy, slo)]
                if not series:
                    continue
                label = policy if len(slos) == 1 else f"{policy}, {slo_text(slo)}"
                points = sorted((x, y, ci) for x, y, ci in series if finite(y))
                if not points:
                    missing.append(label)
                    continue
                ax.plot([x for x, _, _ in points], [y for _, y, _ in points], marker=style.marker(policy),
                        color=style.colour(policy),
                        linestyle=SLO_STYLES[i % len(SLO_STYLES)] if joined else "None", label=label)
                error_bars(ax, points, style.colour(policy))
                plotted = True
        finish_panel(ax, f"{context_set}, {hardware}" if hardware else context_set, plotted, missing,
                     "mean trace bandwidth (Gbps)", "mean TTFT (s), 95 % CI", log_x=True)
    figure_legend(fig, axes)
    return fig


def draw_ttft_vs_bandwidth_by_path(result, rows):
    """ttft_vs_bandwidth of results that sweep network paths: one panel per (context_set, hardware,
    round trip), colour = policy, line style = the rest of the path (link model, queue, congestion
    control), log-log axes; several SLOs are pooled (the title says so)."""
    style = result.style
    policies = sorted({r["policy_only"] for r in rows})
    links = sorted({r["link_label"] for r in rows})
    link_style = {link: SLO_STYLES[i % len(SLO_STYLES)] for i, link in enumerate(links)}
    rtts = sorted({r["rtt_label"] for r in rows}, key=lambda label: float(label.split(" ")[1]) if label != "RTT ?" else math.inf)
    means, largest = pool(rows, lambda r: (r["context_set"], r["hardware"], r["rtt_label"], r["policy_only"],
                                           r["link_label"], r["trace_mean_gbps"]), ["mean_ttft_s"])
    panels = [(c, h, rtt) for c, h in sorted({(r["context_set"], r["hardware"]) for r in rows}) for rtt in rtts]
    fig, axes = panel_grid(len(panels), f"{result.name}: TTFT vs bandwidth{pooled_note(largest)}")
    for ax, (context_set, hardware, rtt) in zip(axes, panels):
        plotted, missing = False, []
        for policy in policies:
            for link in links:
                series = [(gbps, m["mean_ttft_s"], m[("mean_ttft_s", "ci")]) for (c, h, r, p, l, gbps), m in means.items()
                          if (c, h, r, p, l) == (context_set, hardware, rtt, policy, link)]
                points = sorted((x, y, ci) for x, y, ci in series if finite(y))
                if series and not points:
                    missing.append(f"{policy} {link}")
                if not points:
                    continue
                ax.plot([x for x, _, _ in points], [y for _, y, _ in points], marker=style.marker(policy), markersize=3,
                        color=style.colour(policy), linestyle=link_style[link], label=policy)
                error_bars(ax, points, style.colour(policy))
                plotted = True
        title = ", ".join(t for t in (context_set, hardware, rtt) if t)
        finish_panel(ax, title, plotted, missing, "mean trace bandwidth (Gbps)", "mean TTFT (s), 95 % CI", log_x=True)
        if plotted:
            ax.set_yscale("log")
            plain_log_ticks(ax.yaxis, ax.dataLim.intervaly)
    styles = [Line2D([], [], color="grey", linestyle=link_style[link], label=link) for link in links]
    figure_legend(fig, axes, extra=styles)
    return fig


def draw_violation_vs_quality(result):
    """summary.csv: SLO violation rate (x, % of requests) against mean quality (y, %); one series per
    policy with one point per SLO, connected in SLO order and labelled with the SLO (s) where the label
    fits (declutter); colour = policy, marker = ladder; one y range for all panels; one panel per
    trace_set (in order of mean bandwidth), or one pooled panel when there are more than
    MAX_VIOLATION_PANELS trace sets. Uses the single-request rows when there are any (single_requests);
    rows that share a point (context sets, hardware, rates) are averaged weighted by runs."""
    rows = single_requests(result.summary)
    bandwidth = {r["trace_set"]: r["trace_mean_gbps"] for r in rows}
    trace_sets = sorted(bandwidth, key=lambda t: (bandwidth[t] if finite(bandwidth[t]) else math.inf, t))
    pooled = len(trace_sets) > MAX_VIOLATION_PANELS
    panels = [f"all {len(trace_sets)} trace sets, pooled"] if pooled else trace_sets
    policies = sorted({r["policy"] for r in rows})
    style = result.style
    means, largest = pool(rows,
                          lambda r: (panels[0] if pooled else r["trace_set"], r["policy"], r["slo_s"]),
                          ["slo_violation_rate", "mean_quality"])
    fig, axes = panel_grid(len(panels), f"{result.name}: SLO violations vs quality{pooled_note(largest)}", sharey=True)
    for ax, panel in zip(axes, panels):
        plotted, missing = False, []
        for policy in policies:
            series = [(s, 100 * m["slo_violation_rate"], 100 * m["mean_quality"],
                       tuple(100 * v for v in m[("slo_violation_rate", "ci")]))
                      for (t, p, s), m in means.items() if (t, p) == (panel, policy)]
            if not series:
                continue
            points = sorted(((s, x, y, ci) for s, x, y, ci in series if finite(x) and finite(y)),
                            key=lambda point: slo_order(point[0]))
            if not points:
                missing.append(policy)
                continue
            _, xs, ys, cis = zip(*points)
            ax.plot(xs, ys, marker=style.marker(policy), color=style.colour(policy), linestyle=style.line(policy),
                    label=style.policy(policy))
            error_bars(ax, list(zip(xs, ys, cis)), style.colour(policy), horizontal=True)
            for slo, x, y, _ in points:
                ax.annotate("no SLO" if slo is None else f"{slo:g} s", (x, y), xytext=(4, 4),
                            textcoords="offset points", fontsize=7, color=style.colour(policy))
            plotted = True
        finish_panel(ax, panel, plotted, missing, "SLO violations (%), 95 % CI", "mean quality (%)")
    figure_legend(fig, axes, style.path_handles())
    declutter(fig)
    return fig


def draw_ttft_cdf(result):
    """runs.jsonl: empirical CDF of per-request TTFT (x, s) as the share of requests with TTFT <= x (y, %),
    over all requests of all runs of the single-request workload when there are any (single_requests);
    one line per policy; one panel per SLO (the MAX_CDF_PANELS smallest SLOs), with a dashed vertical
    line at the SLO. Requests not completed count as TTFT = +inf, so a line ends below 100 %. The x
    axis is logarithmic when the TTFTs span more than two decades."""
    ttfts = defaultdict(list)
    for run in single_requests(result.runs):
        ttfts[(run["slo_s"], run["policy"])].extend(run["ttfts"])
    all_slos = sorted({slo for slo, _ in ttfts}, key=slo_order)
    slos = all_slos[:MAX_CDF_PANELS]
    shown = f" (first {len(slos)} of {len(all_slos)} SLOs)" if len(all_slos) > len(slos) else ""
    policies = sorted({policy for _, policy in ttfts})
    style = result.style
    finite_ttfts = [t for (slo, _), values in ttfts.items() if slo in slos for t in values if math.isfinite(t)]
    log_x = bool(finite_ttfts) and min(finite_ttfts) > 0 and max(finite_ttfts) / min(finite_ttfts) > 100
    rows = single_requests(result.summary or [])
    pooled = (f"\neach line pools every request of {len({r['trace_set'] for r in rows})} trace set(s) × "
              f"{len({r['context_set'] for r in rows})} context set(s)") if rows else ""
    fig, axes = panel_grid(len(slos), f"{result.name}: TTFT distribution{shown}{pooled}", sharey=True)
    for ax, slo in zip(axes, slos):
        plotted, missing = False, []
        for policy in policies:
            values = ttfts.get((slo, policy), [])
            done = sorted(t for t in values if math.isfinite(t))
            if values and not done:
                missing.append(policy)
            if not done:
                continue
            shares = [100 * (i + 1) / len(values) for i in range(len(done))]
            ax.step([done[0]] + done, [0.0] + shares, where="post", color=style.colour(policy), linestyle=style.line(policy),
                    label=style.policy(policy))
            plotted = True
        if slo is not None:
            ax.axvline(slo, color="black", linestyle="--", linewidth=1, label="SLO")
        ax.set_ylim(0, 102)
        finish_panel(ax, slo_text(slo), plotted, missing, "TTFT (s)", "requests with TTFT ≤ x (%)", log_x=log_x)
    figure_legend(fig, axes, style.path_handles())
    return fig


def draw_ttft_vs_load(result):
    """summary.csv rows with workload=poisson: arrival rate (x, requests/s) against TTFT (y, s), median
    (p50, solid) and 95th percentile (p95, dashed); one colour per policy; one panel per SLO. Rows that
    share a point (context sets, trace sets, hardware) are averaged weighted by runs (an approximation
    for percentiles)."""
    rows = [r for r in result.summary if r["workload"] == "poisson" and finite(r["rate_per_s"])]
    slos = sorted({r["slo_s"] for r in rows}, key=slo_order)
    policies = sorted({r["policy"] for r in rows})
    style = result.style
    means, largest = pool(rows, lambda r: (r["slo_s"], r["policy"], r["rate_per_s"]), ["p50_ttft_s", "p95_ttft_s"])
    fig, axes = panel_grid(len(slos), f"{result.name}: TTFT vs load{pooled_note(largest)}", sharey=True)
    for ax, slo in zip(axes, slos):
        plotted, missing = False, []
        for policy in policies:
            for field, percentile, line in (("p50_ttft_s", "p50", "-"), ("p95_ttft_s", "p95", "--")):
                series = [(rate, m[field], m[(field, "ci")]) for (s, p, rate), m in means.items() if (s, p) == (slo, policy)]
                if not series:
                    continue
                points = sorted((x, y, ci) for x, y, ci in series if finite(y))
                if not points:
                    missing.append(f"{policy} {percentile}")
                    continue
                label = policy if percentile == "p50" else "_nolegend_"  # the p50 line carries the legend
                ax.plot([x for x, _, _ in points], [y for _, y, _ in points], marker=style.marker(policy),
                        linestyle=line, color=style.colour(policy), label=label)
                error_bars(ax, points, style.colour(policy))
                plotted = True
        finish_panel(ax, slo_text(slo), plotted, missing, "arrival rate (requests/s)", "TTFT (s), 95 % CI")
    styles = [Line2D([], [], color="grey", linestyle="-", label="p50"),
              Line2D([], [], color="grey", linestyle="--", label="p95")]
    figure_legend(fig, axes, styles)
    return fig


def draw_fidelity(result):
    """fidelity.jsonl: empirical CDFs of the simulator's signed relative error, simulated / emulated - 1 (x, %),
    one line per link model: per request's TTFT (left panel) and per chunk's transfer time (right; chunks
    both ways fetched at the same level). Dotted vertical lines at +-5 %, the issue's median target; x is
    clipped to [-60 %, +60 %] (the extremes stay in fidelity.csv)."""
    errors = result.fidelity
    model_colour = colours(errors)
    fig, axes = panel_grid(2, f"{result.name}: simulated vs emulated")
    for ax, kind, title in zip(axes, ("ttft", "chunk"), ("TTFT per request", "transfer time per chunk")):
        plotted = False
        for model in sorted(errors):
            values = sorted(100 * v for v in errors[model][kind])
            if not values:
                continue
            shares = [100 * (i + 1) / len(values) for i in range(len(values))]
            ax.step([values[0]] + values, [0.0] + shares, where="post", color=model_colour[model],
                    label=f"{model} (n={len(values)})" if kind == "ttft" else model)
            plotted = True
        for x in (-5, 5):
            ax.axvline(x, color="black", linestyle=":", linewidth=1)
        ax.set_xlim(-60, 60)
        ax.set_ylim(0, 102)
        ax.legend(loc="lower right", fontsize="small")
        finish_panel(ax, title, plotted, [], "simulated / emulated - 1 (%)", "share ≤ x (%)")
    return fig


def draw_rd(result):
    """rd.jsonl: each codec's rate-distortion curve, KL (x, log) against the compression ratio vs fp16 (y, log),
    one line per codec through its points in order of KL; the legend gives its BD-rate against cachegen.
    Points with KL 0 (lossless) cannot sit on a log axis and are left out."""
    curves = result.rd
    codec_colour = colours(curves)
    fig, axes = panel_grid(1, f"{result.name}: rate-distortion")
    ax = axes[0]
    plotted = False
    missing = []
    for codec in sorted(curves):
        points = sorted((kl, ratio) for kl, ratio in curves[codec]["points"] if kl > 0 and finite(kl) and finite(ratio))
        if not points:
            missing.append(codec)
            continue
        bd = curves[codec]["bd_rate"]
        label = codec + (f" (BD-rate {100 * bd:+.1f} %)" if bd is not None and finite(bd) else "")
        ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", color=codec_colour[codec], label=label)
        plotted = True
    ax.set_yscale("log")
    plain_log_ticks(ax.yaxis, ax.dataLim.intervaly)
    finish_panel(ax, "bytes vs quality", plotted, missing, "KL(reference || decoded), mean per token",
                 "compression vs fp16 (×)", log_x=True)
    figure_legend(fig, [ax])
    return fig


DRAW = {
    "size_quality": draw_size_quality,
    "ttft_vs_bandwidth": draw_ttft_vs_bandwidth,
    "violation_vs_quality": draw_violation_vs_quality,
    "ttft_cdf": draw_ttft_cdf,
    "ttft_vs_load": draw_ttft_vs_load,
    "fidelity": draw_fidelity,
    "rd": draw_rd,
}


# ---------------------------------------------------------------- choosing and writing figures

def missing_input(result, kind):
    """Why `kind` cannot be drawn from this result (a message naming the file), or None if it can."""
    if kind == "size_quality":
        name, rows = "levels.csv", result.levels
    elif kind == "ttft_cdf":
        name, rows = result.runs_file, result.runs
    elif kind == "fidelity":
        name, rows = "fidelity.jsonl", result.fidelity
    elif kind == "rd":
        name, rows = "rd.jsonl", result.rd
    else:
        name, rows = "summary.csv", result.summary
    path = result.path(name)
    if rows is None:
        return f"{kind} needs {path}, which does not exist"
    if not rows:
        return f"{kind} needs rows in {path}, which has none"
    if kind == "ttft_cdf" and not any(run["ttfts"] for run in rows):
        return f"{kind} needs requests in {path}, whose runs have none"
    if kind == "ttft_vs_load" and not any(r["workload"] == "poisson" for r in rows):
        return f"{kind} needs rows with workload=poisson in {path}, which has none"
    return None


def choose_kinds(result, requested):
    """The kinds to draw: `requested` (from --figures), else config.json "figures" (a kind or a list; the
    runner writes [] when the config names none, which means the default), else every kind the result
    has data for (ttft_vs_bandwidth only with >= 2 distinct bandwidths among the rows it draws, along a
    bandwidth axis: Result.bandwidth_axis). A kind
    asked for explicitly (either way) whose input is missing is an error."""
    figures = result.config.get("figures")
    if requested is None and figures:
        requested = [figures] if isinstance(figures, str) else figures
        if not isinstance(requested, list) or not all(isinstance(k, str) for k in requested):
            raise PlotError(f"{result.path('config.json')}: \"figures\" must be a kind or a list of kinds")
        unknown = [k for k in requested if k not in DRAW]
        if unknown:
            raise PlotError(f"{result.path('config.json')}: \"figures\": unknown kind(s) {', '.join(unknown)}; "
                            f"known: {', '.join(DRAW)}")
    if requested is not None:
        for kind in requested:
            reason = missing_input(result, kind)
            if reason:
                raise PlotError(reason)
        return list(dict.fromkeys(requested))
    kinds = [kind for kind in DRAW if missing_input(result, kind) is None]
    if "ttft_vs_bandwidth" in kinds:
        axis = result.bandwidth_axis
        bandwidths = {r["trace_mean_gbps"] for r in single_requests(result.summary)
                      if finite(r["trace_mean_gbps"]) and (axis is None or r["trace_set"] in axis)}
        if len(bandwidths) < 2:
            kinds.remove("ttft_vs_bandwidth")
    return kinds


FORMATS = ("png", "svg", "pdf")


def save_figure(fig, directory, kind, formats=("png", "svg")):
    """Writes directory/<kind>.<format> for each format, each to a temporary file first and then renamed,
    so an interrupted run never leaves a truncated figure. Returns the paths written."""
    paths = []
    for fmt in formats:
        fd, temporary = tempfile.mkstemp(dir=directory, prefix=f".{kind}.", suffix=f".{fmt}.tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                fig.savefig(f, format=fmt, dpi=150, bbox_inches="tight",
                            metadata={"Date": None} if fmt == "svg" else {"CreationDate": None} if fmt == "pdf" else None)
            os.chmod(temporary, 0o644)
            final = os.path.join(directory, f"{kind}.{fmt}")
            os.replace(temporary, final)
        except BaseException:
            os.unlink(temporary)
            raise
        paths.append(final)
    plt.close(fig)
    return paths


def choice_list(known, what):
    """An argparse type for a comma-separated list of `known` names (kinds, formats), each once;
    `what` names them in the error."""
    def parse(text):
        given = [item.strip() for item in text.split(",") if item.strip()]
        unknown = [item for item in given if item not in known]
        if unknown or not given:
            raise argparse.ArgumentTypeError(f"unknown {what}(s) {', '.join(unknown) or '(none given)'}; "
                                             f"known: {', '.join(known)}")
        return list(dict.fromkeys(given))
    return parse


def main(argv=None):
    parser = argparse.ArgumentParser(prog="plot.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("result_dir", help="results/<name>/ as written by `kvstream run`")
    parser.add_argument("--figures", type=choice_list(DRAW, "kind"), help=f"comma-separated kinds: {', '.join(DRAW)}")
    parser.add_argument("--format", type=choice_list(FORMATS, "format"), default=["png", "svg"],
                        help=f"comma-separated image formats: {', '.join(FORMATS)} (default png,svg)")
    parser.add_argument("--width", choices=list(PAPER_WIDTHS),
                        help="draw at a paper's width with 8 pt fonts: column (3.33 in) or page (7.0 in); "
                             "default: 4.8 in per panel")
    args = parser.parse_args(argv)
    try:
        result = Result(args.result_dir)
        kinds = choose_kinds(result, args.figures)
        if not kinds:
            print(f"plot.py: nothing to plot in {args.result_dir}", file=sys.stderr)
            return 0
        use_width(args.width)
        directory = result.path("figures")
        os.makedirs(directory, exist_ok=True)
        for kind in kinds:
            for path in save_figure(DRAW[kind](result), directory, kind, args.format):
                print(path, flush=True)
    except (PlotError, OSError) as e:
        print(f"plot.py: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
