// `kvstream link-check`: how exactly an emulated link delivers a trace (emulation/link_check.h).
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "emulation/link_check.h"
#include "sim/sim_config.h"
#include "traces/trace_inputs.h"
#include "traces/trace_transforms.h"

namespace kvstream::cli {
namespace {

struct Options {
  std::string trace_arg, trace_format;
  double scale = 1, mean_mbps = 0, seconds = 3, window_ms = 100, rtt_ms = 10;
  bool json = false, no_offloads = false;
};

std::optional<Options> parse(const std::vector<std::string>& args) {
  Options o;
  po::options_description options("options");
  options.add_options()
    ("trace", po::value(&o.trace_arg)->required(), "trace file, FILE#k, or generator spec (traces/README.md)")
    ("trace-format", po::value(&o.trace_format)->default_value("auto"), "auto, mahimahi, pensieve, lumos5g, csv")
    ("scale", po::value(&o.scale)->default_value(1.0), "multiply the trace's capacity by X")
    ("mean-mbps", po::value(&o.mean_mbps), "or scale the trace to this mean, Mbit/s")
    ("seconds", po::value(&o.seconds)->default_value(3.0), "seconds measured (after 0.5 s of warm-up; at most 3600)")
    ("window-ms", po::value(&o.window_ms)->default_value(100.0), "the windows compared, ms (1 to 10000)")
    ("rtt-ms", po::value(&o.rtt_ms)->default_value(10.0), "the link's round trip, ms")
    ("no-offloads", po::bool_switch(&o.no_offloads), "one read and write per MTU packet (the devices offer no TSO/USO)")
    ("json", po::bool_switch(&o.json), "one JSON object");
  po::variables_map vm;
  if (!parse_or_help(args,
                     "usage: kvstream link-check --trace T [--scale X | --mean-mbps M] [--seconds S] [--window-ms W] [--json]\n\n"
                     "Keeps an emulated link's queue from running empty with UDP datagrams and compares the bytes it\n"
                     "delivers in every window with the trace's integral over that window (docs/EMULATION.md\n"
                     "\"Accuracy\"): median, p95 and max of |delivered / integral - 1|, and how late deliveries were\n"
                     "written. A trace without capacity in the measured span is an error (nothing to compare).\n"
                     "Needs root.",
                     options, vm))
    return std::nullopt;
  if (!(o.seconds > 0 && o.seconds <= emulation::kMaxLinkCheckS))
    throw po::error("--seconds must be in (0, " + std::to_string(int(emulation::kMaxLinkCheckS)) + "]");
  if (!(o.window_ms >= 1e3 * emulation::kMinLinkCheckWindowS && o.window_ms <= 1e3 * emulation::kMaxLinkCheckWindowS))
    throw po::error("--window-ms must be in [1, 10000]");
  if (o.window_ms / 1e3 > o.seconds) throw po::error("--window-ms is longer than --seconds: no window to compare");
  if (!(o.rtt_ms >= 0 && o.rtt_ms <= sim::kMaxRttMs)) throw po::error("--rtt-ms must be in [0, 1e6]");
  if (vm.count("mean-mbps") && !vm["scale"].defaulted()) throw po::error("give --scale or --mean-mbps, not both");
  if (vm.count("mean-mbps") && !(o.mean_mbps > 0 && o.mean_mbps <= 1e6)) throw po::error("--mean-mbps must be in (0, 1e6]");
  if (!(o.scale > 0 && o.scale <= sim::kMaxTraceScale)) throw po::error("--scale must be in (0, 1e6]");
  return o;
}

int run(const Options& o) {
  auto trace = traces::load_one_trace(o.trace_arg, o.trace_format);
  if (!(trace.mean_bps() > 0)) throw std::invalid_argument("trace " + trace.name() + " has no capacity: nothing to measure");
  const double factor = o.mean_mbps > 0 ? o.mean_mbps * 1e6 / trace.mean_bps() : o.scale;
  if (factor != 1) trace = traces::scale(trace, factor);
  emulation::LinkCheckOptions check;
  check.trace = std::make_shared<traces::BandwidthTrace>(std::move(trace));
  check.seconds = o.seconds;
  check.window_s = o.window_ms / 1e3;
  check.one_way_delay_s = o.rtt_ms / 2e3;
  check.offloads = !o.no_offloads;
  const auto r = emulation::check_link(check);
  if (o.json) {
    std::cout << emulation::to_json(r).dump() << "\n";
    return 0;
  }
  std::cout << r.trace << ": mean " << r.mean_mbps << " Mbit/s, " << r.windows << " windows of " << o.window_ms
            << " ms: |delivered / integral - 1| median " << r.median_abs_error << ", p95 " << r.p95_abs_error
            << ", max " << r.max_abs_error << "; whole span " << r.delivered_vs_integral << "; lateness mean "
            << r.mean_lateness_s * 1e6 << " us, max " << r.max_lateness_s * 1e6 << " us; CPU " << r.cpu_s << " s ("
            << r.cpu_s_per_gbit << " s per Gbit delivered)\n";
  return 0;
}

}  // namespace

int link_check_main(const std::vector<std::string>& args) { return parse_and_run<Options>(args, parse, run); }

}  // namespace kvstream::cli
