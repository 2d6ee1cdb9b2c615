#!/usr/bin/python3
"""Tests of plotting/plot.py on a synthetic result directory.

    /usr/bin/python3 tests/plotting/test_plot.py

The fixture mimics `kvstream run`: 2 context sets, 3 policies (text, quant8, cachegen), 2 SLOs,
constant-bandwidth trace sets at 0.1/1/10 Gbps, a poisson workload at 3 rates on the 1 Gbps trace
set, and levels.csv with cachegen:1-3, quant:bits=8 and zstd. plot.py runs in a subprocess with this
interpreter (which must import matplotlib).
"""
import csv
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

PLOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "plotting", "plot.py")
KINDS = ["size_quality", "ttft_vs_bandwidth", "violation_vs_quality", "ttft_cdf", "ttft_vs_load"]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

SUMMARY_HEADER = ["context_set", "trace_set", "policy", "slo_s", "hardware", "workload", "rate_per_s", "runs",
                  "requests", "completed", "trace_mean_gbps", "mean_ttft_s", "p50_ttft_s", "p95_ttft_s",
                  "slo_violation_rate", "mean_bytes", "mean_quality", "mean_ttft_s_ci95_lo", "mean_ttft_s_ci95_hi",
                  "p50_ttft_s_ci95_lo", "p50_ttft_s_ci95_hi", "p95_ttft_s_ci95_lo", "p95_ttft_s_ci95_hi",
                  "slo_violation_rate_ci95_lo", "slo_violation_rate_ci95_hi"]
LEVELS_HEADER = ["context_set", "model", "level", "codec", "contexts", "tokens", "bytes", "bytes_per_token",
                 "ratio_vs_fp16", "quality", "ppl_ref", "ppl", "kl_mean", "encode_mb_per_s", "decode_mb_per_s"]

CONTEXT_SETS = {"longchat": ("mistral-7b", 9500), "wikitext": ("smollm2-135m", 4000)}
FP16_BYTES_PER_TOKEN = 131072
# level -> (codec, ratio vs fp16, top-1 agreement)
LEVELS = {"cachegen:1": ("cachegen", 4.9, 0.990), "cachegen:2": ("cachegen", 7.3, 0.975),
          "cachegen:3": ("cachegen", 10.8, 0.930), "quant:bits=8": ("quant:bits=8", 1.98, 0.998),
          "zstd": ("zstd", 1.12, 1.0)}
# policy -> (KV bytes as a share of fp16, quality, recompute seconds per 1K tokens)
POLICIES = {"text": (0.0, 1.0, 0.21), "quant8": (1 / 1.98, 0.998, 0.0), "cachegen": (1 / 7.3, 0.975, 0.0)}
TRACE_SETS = {"const-0.1gbps": 0.1, "const-1gbps": 1.0, "const-10gbps": 10.0}


def request_ttft(policy, tokens, gbps, queueing_s):
    """A plausible TTFT (s): transfer + decode + recompute + queueing; inf when it would not finish
    (quant8 on longchat at 0.1 Gbps), so summary.csv holds inf and nan values."""
    share, _, recompute_per_ktok = POLICIES[policy]
    transfer = share * tokens * FP16_BYTES_PER_TOKEN * 8 / (gbps * 1e9)
    ttft = transfer + 0.02 * share * tokens / 1000 + recompute_per_ktok * tokens / 1000 + queueing_s
    return math.inf if ttft > 30 else ttft  # the simulator gives up: not completed


def make_result(directory, trace_sets=TRACE_SETS, slos=(0.5, 2.0), rates=(0.5, 1.0, 2.0), levels=True,
                runs=True, figures=()):
    """Writes a result directory like `kvstream run` does; returns its path. config.json holds
    "figures": [] by default, as the runner writes it when the config names none; None leaves it out."""
    os.makedirs(directory)
    config = {"name": "fixture-exp", "seed": 1}
    if figures is not None:
        config["figures"] = list(figures)
    with open(os.path.join(directory, "config.json"), "w") as f:
        json.dump(config, f, indent=2)

    workloads = [("single", None, t) for t in trace_sets]
    workloads += [("poisson", rate, "const-1gbps") for rate in rates if "const-1gbps" in trace_sets]
    summary, run_lines = [], []
    for context_set, (_, tokens) in CONTEXT_SETS.items():
        for workload, rate, trace_set in workloads:
            gbps = trace_sets[trace_set]
            for policy, (share, quality, _) in POLICIES.items():
                for slo in slos:
                    count = 1 if workload == "single" else 4
                    ttfts = [request_ttft(policy, tokens, gbps, (rate or 0) * 0.3 * i) for i in range(count)]
                    done = sorted(t for t in ttfts if math.isfinite(t))
                    mean = sum(done) / len(done) if done else math.inf
                    p50, p95 = (done[len(done) // 2], done[-1]) if done else (math.nan, math.nan)
                    violations = sum(not t <= slo for t in ttfts) / count
                    spread = [v for point in (mean, p50, p95) for v in (0.9 * point, 1.1 * point)]
                    summary.append([context_set, trace_set, policy, slo, "a40_mistral-7b", workload,
                                    "" if rate is None else rate, 1, count, len(done), gbps, mean, p50, p95,
                                    violations, share * tokens * FP16_BYTES_PER_TOKEN, quality, *spread,
                                    max(violations - 0.2, 0), min(violations + 0.2, 1)])
                    requests = [{"request": i, "context": f"{context_set}-0", "arrival_s": i / (rate or 1),
                                 "completed": math.isfinite(t), "ttft_s": t if math.isfinite(t) else None,
                                 "slo_met": t <= slo, "breakdown": {"transfer_s": 0, "decode_s": 0,
                                                                   "recompute_s": 0, "query_prefill_s": 0.01,
                                                                   "queueing_s": 0},
                                 "bytes": share * tokens * FP16_BYTES_PER_TOKEN, "quality": quality,
                                 "choices": ["text" if policy == "text" else "cachegen:2"]}
                                for i, t in enumerate(ttfts)]
                    run_lines.append({"run": len(run_lines), "id": f"r{len(run_lines)}", "context_set": context_set,
                                      "context": None, "trace_set": trace_set, "trace": f"{trace_set}.csv",
                                      "trace_mean_gbps": gbps, "policy": policy, "slo_s": slo,
                                      "hardware": "a40_mistral-7b", "workload": workload, "rate_per_s": rate,
                                      "repetition": 0, "summary": {}, "requests": requests})
    with open(os.path.join(directory, "summary.csv"), "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(SUMMARY_HEADER)
        writer.writerows(summary)
    if runs:
        with open(os.path.join(directory, "runs.jsonl"), "w") as f:
            for run in run_lines:
                f.write(json.dumps(run) + "\n")
    if levels:
        with open(os.path.join(directory, "levels.csv"), "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(LEVELS_HEADER)
            for context_set, (model, tokens) in CONTEXT_SETS.items():
                for level, (codec, ratio, quality) in LEVELS.items():
                    size = 50 * tokens * FP16_BYTES_PER_TOKEN / ratio
                    writer.writerow([context_set, model, level, codec, 50, 50 * tokens, size, size / (50 * tokens),
                                     ratio, quality, 6.1, 6.1 / quality ** 0.5, 1 - quality, 80.0, 310.0])
    return directory


def run_plot(directory, *args):
    return subprocess.run([sys.executable, PLOT, directory, *args], capture_output=True, text=True, timeout=60)


def kinds_written(process):
    """The figure kinds named by the paths plot.py printed, in order, each once."""
    names = [os.path.splitext(os.path.basename(line))[0] for line in process.stdout.splitlines()]
    return list(dict.fromkeys(names))


class PlotTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="kvstream-plot-test-")
        cls.full = make_result(os.path.join(cls.tmp, "full"))
        cls.full_run = run_plot(cls.full)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def fresh(self, name, **kwargs):
        return make_result(os.path.join(self.tmp, name), **kwargs)

    def assert_error(self, process, *fragments):
        self.assertEqual(process.returncode, 2, process.stderr)
        self.assertNotIn("Traceback", process.stderr)
        for fragment in fragments:
            self.assertIn(fragment, process.stderr)

    def test_every_kind_renders_png_and_svg(self):
        self.assertEqual(self.full_run.returncode, 0, self.full_run.stderr)
        figures = os.path.join(self.full, "figures")
        self.assertEqual(len(self.full_run.stdout.splitlines()), 2 * len(KINDS))
        for kind in KINDS:
            with open(os.path.join(figures, kind + ".png"), "rb") as f:
                self.assertEqual(f.read(8), PNG_SIGNATURE, kind)
            with open(os.path.join(figures, kind + ".svg")) as f:
                self.assertIn("<svg", f.read(2000), kind)
            self.assertGreater(os.path.getsize(os.path.join(figures, kind + ".png")), 1000, kind)
        self.assertEqual(sorted(os.listdir(figures)), sorted(k + e for k in KINDS for e in (".png", ".svg")),
                         "no temporary files left behind")

    def test_default_selection_full_result(self):
        self.assertEqual(kinds_written(self.full_run), KINDS)

    def test_default_selection_skips_missing_inputs(self):
        process = run_plot(self.fresh("no-levels-no-runs", levels=False, runs=False))
        self.assertEqual(process.returncode, 0, process.stderr)
        self.assertEqual(kinds_written(process), ["ttft_vs_bandwidth", "violation_vs_quality", "ttft_vs_load"])

    def test_default_selection_needs_two_bandwidths_and_poisson_rows(self):
        process = run_plot(self.fresh("one-trace", trace_sets={"const-1gbps": 1.0}, rates=(), levels=False,
                                      figures=None))
        self.assertEqual(process.returncode, 0, process.stderr)
        self.assertEqual(kinds_written(process), ["violation_vs_quality", "ttft_cdf"])

    def test_config_figures_and_flag_choose_kinds(self):
        directory = self.fresh("config-figures", figures=["size_quality"])
        self.assertEqual(kinds_written(run_plot(directory)), ["size_quality"])
        process = run_plot(directory, "--figures", "ttft_cdf")
        self.assertEqual(process.returncode, 0, process.stderr)
        self.assertEqual(kinds_written(process), ["ttft_cdf"])

    def test_many_trace_sets_and_slos_are_pooled_or_cut(self):
        trace_sets = {f"const-{g:g}gbps": g for g in (0.1, 0.3, 1.0, 2.0, 3.0, 5.0, 10.0)}
        directory = self.fresh("many", trace_sets=trace_sets, slos=(0.2, 0.5, 1.0, 2.0, 5.0), levels=False)
        process = run_plot(directory, "--figures", "violation_vs_quality,ttft_cdf")
        self.assertEqual(process.returncode, 0, process.stderr)
        self.assertEqual(kinds_written(process), ["violation_vs_quality", "ttft_cdf"])
        with open(os.path.join(directory, "figures", "ttft_cdf.svg")) as f:
            self.assertIn("first 4 of 5 SLOs", f.read())

    def test_explicit_kind_with_missing_input_is_an_error(self):
        directory = self.fresh("missing", levels=False, rates=())
        self.assert_error(run_plot(directory, "--figures", "size_quality"), "levels.csv")
        self.assert_error(run_plot(directory, "--figures", "ttft_vs_load"), "summary.csv", "poisson")
        open(os.path.join(directory, "runs.jsonl"), "w").close()
        self.assert_error(run_plot(directory, "--figures", "ttft_cdf"), "runs.jsonl")
        self.assertFalse(os.path.exists(os.path.join(directory, "figures")))

    def test_malformed_csv_names_file_and_line(self):
        directory = self.fresh("bad-csv", runs=False)
        with open(os.path.join(directory, "summary.csv"), "a") as f:
            f.write("longchat,const-1gbps,cachegen,0.5\n")  # too few fields, on line 74
        self.assert_error(run_plot(directory, "--figures", "violation_vs_quality"), "summary.csv:74")
        path = os.path.join(directory, "levels.csv")
        with open(path) as f:
            lines = f.readlines()
        lines[2] = lines[2].replace(",0.975,", ",high,", 1)
        with open(path, "w") as f:
            f.writelines(lines)
        self.assert_error(run_plot(directory, "--figures", "size_quality"), "levels.csv:3", "quality")

    def test_bad_json_line_names_file_and_line(self):
        directory = self.fresh("bad-json", levels=False)
        with open(os.path.join(directory, "runs.jsonl"), "a") as f:
            f.write('{"run": 72, "policy": \n')
        self.assert_error(run_plot(directory, "--figures", "ttft_cdf"), "runs.jsonl:73")

    @unittest.skipIf(shutil.which("zstd") is None, "the zstd program is not installed (scripts/setup.sh)")
    def test_compressed_runs_draw_the_same_figure_and_a_torn_file_is_an_error(self):
        plain = self.fresh("runs-plain", levels=False)
        compressed = self.fresh("runs-zst", levels=False)
        runs = os.path.join(compressed, "runs.jsonl")
        subprocess.run(["zstd", "-q", "--rm", runs, "-o", runs + ".zst"], check=True)
        for directory in (plain, compressed):
            self.assertEqual(run_plot(directory, "--figures", "ttft_cdf").returncode, 0)
        with open(os.path.join(plain, "figures", "ttft_cdf.svg")) as a, \
                open(os.path.join(compressed, "figures", "ttft_cdf.svg")) as b:
            self.assertEqual(a.read(), b.read())
        with open(runs + ".zst", "rb") as f:
            data = f.read()
        with open(runs + ".zst", "wb") as f:
            f.write(data[:len(data) // 2])
        self.assert_error(run_plot(compressed, "--figures", "ttft_cdf"), "runs.jsonl.zst")

    def test_fidelity_results_draw_the_error_cdfs(self):
        directory = os.path.join(self.tmp, "fidelity")
        os.makedirs(directory)
        with open(os.path.join(directory, "config.json"), "w") as f:
            json.dump({"name": "fid", "rtt_ms": [0, 20]}, f)
        with open(os.path.join(directory, "fidelity.jsonl"), "w") as f:
            for shift in (0.0, 0.1):
                run = {"simulated": {model: {"ttft_errors": [bias + shift, bias - shift],
                                             "chunk_errors": [bias, bias + 0.01, bias - 0.02]}
                                     for model, bias in (("fluid", -0.2), ("tcp", -0.01))}}
                f.write(json.dumps(run) + "\n")
        process = run_plot(directory)
        self.assertEqual(process.returncode, 0, process.stderr)
        self.assertEqual(kinds_written(process), ["fidelity"])
        with open(os.path.join(directory, "figures", "fidelity.png"), "rb") as f:
            self.assertEqual(f.read(8), PNG_SIGNATURE)
        with open(os.path.join(directory, "fidelity.jsonl"), "a") as f:
            f.write(json.dumps({"simulated": {"tcp": {"ttft_errors": ["x"], "chunk_errors": []}}}) + "\n")
        self.assert_error(run_plot(directory, "--figures", "fidelity"), "fidelity.jsonl:3", "ttft_errors")

    def test_rd_results_draw_the_curves(self):
        directory = os.path.join(self.tmp, "rd")
        os.makedirs(directory)
        with open(os.path.join(directory, "rd.jsonl"), "w") as f:
            for codec, ratios in (("cachegen", (7.0, 5.2, 4.1)), ("quant", (3.9, 2.0))):
                for i, ratio in enumerate(ratios):
                    f.write(json.dumps({"codec": codec, "point": f"level={i + 1}", "kl_mean": 0.1 / (i + 1) ** 2,
                                        "ratio_vs_fp16": ratio}) + "\n")
            f.write(json.dumps({"codec": "fp16", "point": "level=1", "kl_mean": 0.0, "ratio_vs_fp16": 1.0}) + "\n")
            for codec, bd in (("cachegen", 0.0), ("quant", 0.8), ("fp16", None)):
                f.write(json.dumps({"codec": codec, "bd_rate_vs_cachegen": bd, "kl_range": None}) + "\n")
        process = run_plot(directory)
        self.assertEqual(process.returncode, 0, process.stderr)
        self.assertEqual(kinds_written(process), ["rd"])
        with open(os.path.join(directory, "figures", "rd.svg")) as f:
            svg = f.read()
        self.assertIn("BD-rate +80.0 %", svg)
        self.assertIn("no finite value: fp16", svg)
        with open(os.path.join(directory, "rd.jsonl"), "a") as f:
            f.write(json.dumps({"codec": "kivi", "point": "bits=2", "kl_mean": "high", "ratio_vs_fp16": 5}) + "\n")
        self.assert_error(run_plot(directory, "--figures", "rd"), "rd.jsonl:10", "kl_mean")

    def test_missing_result_dir_is_an_error(self):
        self.assert_error(run_plot(os.path.join(self.tmp, "does-not-exist")), "does-not-exist")
        self.assert_error(run_plot(os.path.join(self.full, "config.json")), "not a directory")



def load_plot_module():
    """plot.py as a module, for its helpers."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("plot", PLOT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class NetworkPaths(unittest.TestCase):
    """Results of a config with a network section: each path is its own series, never pooled."""

    def test_several_paths_are_named_in_the_series_and_one_path_is_left_alone(self):
        plot = load_plot_module()
        rows = [{"policy": "mpc", "link_model": "fluid", "rtt_ms": "20", "queue": "", "congestion_control": "",
                 "slow_start_after_idle": ""},
                {"policy": "mpc", "link_model": "tcp", "rtt_ms": "20", "queue": "shallow",
                 "congestion_control": "cubic", "slow_start_after_idle": "false"}]
        plot.label_network_paths(rows)
        self.assertEqual([r["policy"] for r in rows],
                         ["mpc \u00b7 fluid 20 ms", "mpc \u00b7 tcp 20 ms shallow cubic no restart"])
        runs = [{"policy": "quant8", "link_model": "tcp", "rtt_ms": 80.0, "queue": None,
                 "congestion_control": "bbr", "slow_start_after_idle": True}] * 2
        self.assertEqual([r["policy"] for r in plot.label_network_paths([dict(r) for r in runs])], ["quant8"] * 2)
        self.assertEqual(plot.label_network_paths([{"policy": "text"}]), [{"policy": "text"}])

    def test_ttft_vs_bandwidth_has_a_panel_per_round_trip_and_a_line_style_per_link(self):
        plot = load_plot_module()
        scratch = tempfile.mkdtemp(prefix="kvstream-plot-paths-")
        self.addCleanup(shutil.rmtree, scratch)
        directory = make_result(os.path.join(scratch, "r"), levels=False, runs=False)
        with open(os.path.join(directory, "summary.csv"), newline="") as f:
            rows = list(csv.reader(f))
        header, body = rows[0], rows[1:]
        at = header.index("rate_per_s") + 1
        paths = [["fluid", "20", "", "", ""], ["tcp", "20", "shallow", "cubic", "true"],
                 ["fluid", "80", "", "", ""], ["tcp", "80", "shallow", "cubic", "true"]]
        with open(os.path.join(directory, "summary.csv"), "w", newline="") as f:
            writer = csv.writer(f)
            writer.writerow(header[:at] + plot.NETWORK_KEYS + header[at:])
            writer.writerows(row[:at] + path + row[at:] for path in paths for row in body)
        import matplotlib
        matplotlib.use("Agg")
        figure = plot.draw_ttft_vs_bandwidth(plot.Result(directory))
        titles = [ax.get_title() for ax in figure.axes if ax.get_title()]
        self.assertEqual(titles, ["longchat, a40_mistral-7b, RTT 20 ms", "longchat, a40_mistral-7b, RTT 80 ms",
                                  "wikitext, a40_mistral-7b, RTT 20 ms", "wikitext, a40_mistral-7b, RTT 80 ms"])
        styles = {line.get_linestyle() for ax in figure.axes for line in ax.get_lines() if line.get_marker() == "o"}
        self.assertEqual(styles, {"-", "--"})  # fluid, tcp shallow cubic
        labels = [text.get_text() for legend in figure.legends for text in legend.get_texts()]
        self.assertEqual(labels, ["cachegen", "quant8", "text", "fluid", "tcp shallow cubic"])


class ConfidenceIntervals(unittest.TestCase):
    """summary.csv's 95 % intervals become error bars: a one-row point's own, a pooled point's combined."""

    def test_points_carry_their_intervals(self):
        plot = load_plot_module()
        rows = [{"policy": "mpc", "trace_set": "a", "runs": 10, "mean_ttft_s": 1.0,
                 "mean_ttft_s_ci95_lo": 0.8, "mean_ttft_s_ci95_hi": 1.3},
                {"policy": "text", "trace_set": "a", "runs": 10, "mean_ttft_s": 2.0,
                 "mean_ttft_s_ci95_lo": 1.5, "mean_ttft_s_ci95_hi": 2.5},
                {"policy": "text", "trace_set": "b", "runs": 30, "mean_ttft_s": 4.0,
                 "mean_ttft_s_ci95_lo": 3.5, "mean_ttft_s_ci95_hi": 4.5},
                {"policy": "old", "trace_set": "a", "runs": 1, "mean_ttft_s": 3.0}]
        means, largest = plot.pool(rows, lambda r: r["policy"], ["mean_ttft_s"])
        self.assertEqual(largest, 2)
        self.assertEqual(means["mpc"][("mean_ttft_s", "ci")], (0.8, 1.3))
        self.assertAlmostEqual(means["text"]["mean_ttft_s"], 3.5)
        # pooled: (10 * 2.0 + 30 * 4.0) / 40, half-widths 0.5 and 0.5 combine to sqrt(5^2 + 15^2) / 40
        lo, hi = means["text"][("mean_ttft_s", "ci")]
        self.assertAlmostEqual(lo, 3.5 - math.sqrt(250) / 40)
        self.assertAlmostEqual(hi, 3.5 + math.sqrt(250) / 40)
        self.assertTrue(all(math.isnan(v) for v in means["old"][("mean_ttft_s", "ci")]))

        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        figure, ax = plt.subplots()
        plot.error_bars(ax, [(1.0, 1.0, (0.8, 1.3)), (2.0, 3.5, (math.nan, math.nan))], "C0")
        segments = [s for c in ax.collections for s in c.get_segments()]
        self.assertEqual(len(segments), 1)
        self.assertEqual([tuple(p) for p in segments[0]], [(1.0, 0.8), (1.0, 1.3)])
        plt.close(figure)


if __name__ == "__main__":
    unittest.main()
