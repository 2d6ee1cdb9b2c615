// `kvstream trace <subcommand>`: bandwidth-trace tools. Subcommands live in a table, each a Command
// run with the arguments after its name; `stats` is the first.
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "traces/trace_inputs.h"
#include "traces/trace_readers.h"
#include "traces/trace_stats.h"
#include "traces/trace_transforms.h"

namespace kvstream::cli {
namespace {

struct StatsOptions {
  std::vector<std::string> inputs;
  std::optional<traces::TraceFormat> format;  // empty: sniffed per file
  std::string format_name;
  double factor = 1, bin_s = 0;
  bool json = false;
};

std::optional<StatsOptions> parse_stats(const std::vector<std::string>& args) {
  StatsOptions o;
  po::options_description options("options");
  options.add_options()
    ("input", po::value(&o.inputs)->multitoken()->composing(), "trace files, FILE#k, directories or generator specs")
    ("format", po::value(&o.format_name)->default_value("auto"), "auto, mahimahi, pensieve (fcc, norway), lumos5g, cachegen or csv")
    ("scale", po::value(&o.factor)->default_value(1.0), "multiply every capacity by X first")
    ("bin-s", po::value(&o.bin_s)->default_value(0.0), "percentiles and cv of S-second averages (0: of the trace's own segments)")
    ("json", po::bool_switch(&o.json), "JSON instead of a table: an object for one trace, an array for several");
  po::positional_options_description positional;
  positional.add("input", -1);
  po::variables_map vm;
  if (!parse_or_help(args,
                     "usage: kvstream trace stats FILE|FILE#k|DIR|GENERATOR_SPEC ... [--format F] [--scale X]\n"
                     "                            [--bin-s S] [--json]\n\n"
                     "One row per trace (a CacheGen JSONL file holds one per line; a directory, every file below it).\n"
                     "Fields: name, format, segments, duration_s (one period), mean_mbps, p10/p50/p90_mbps (the\n"
                     "smallest capacity held for at least 10/50/90 % of the period), cv (time-weighted std / mean).\n"
                     "Mahimahi traces are 1 ms bins; --bin-s 1 gives per-second statistics. Generator specs:\n"
                     "constant:gbps=1  uniform:seed=1,chunks=10  markov:seed=1,good_gbps=5,bad_gbps=0.5,good_s=2,\n"
                     "bad_s=1,duration_s=60  step:high_gbps=5,low_gbps=0.5,at_s=1,duration_s=10 (traces/README.md).",
                     options, vm, &positional))
    return std::nullopt;
  if (o.inputs.empty()) throw po::error("give at least one trace file, directory or generator spec");
  if (!(o.factor >= 0) || !std::isfinite(o.factor)) throw po::error("--scale must be finite and >= 0");
  if (!(o.bin_s >= 0) || !std::isfinite(o.bin_s)) throw po::error("--bin-s must be finite and >= 0");
  try {
    o.format = traces::parse_trace_format(o.format_name);
  } catch (const traces::TraceError& e) {
    throw po::error(std::string("--format: ") + e.what());
  }
  return o;
}

void print_table(const std::vector<traces::NamedTrace>& rows, const std::vector<traces::TraceStats>& stats) {
  size_t name_width = 4;
  for (const auto& s : stats) name_width = std::max(name_width, s.name.size());
  std::cout << std::left << std::setw(int(name_width)) << "name" << std::right << std::setw(10) << "format"
            << std::setw(9) << "segments" << std::setw(12) << "duration_s" << std::setw(11) << "mean_mbps"
            << std::setw(11) << "p10_mbps" << std::setw(11) << "p50_mbps" << std::setw(11) << "p90_mbps"
            << std::setw(8) << "cv" << "\n";
  bool chunk_indexed = false;
  for (size_t i = 0; i < rows.size(); ++i) {
    const traces::TraceStats& s = stats[i];
    chunk_indexed = chunk_indexed || s.chunk_indexed;
    std::cout << std::left << std::setw(int(name_width)) << s.name << std::right << std::setw(10) << rows[i].format
              << std::setw(9) << s.segments << std::fixed << std::setprecision(3) << std::setw(12) << s.duration_s
              << std::setw(11) << s.mean_mbps << std::setw(11) << s.p10_mbps << std::setw(11) << s.p50_mbps
              << std::setw(11) << s.p90_mbps << std::setw(8) << s.cv << std::defaultfloat << "\n";
  }
  if (chunk_indexed)
    std::cout << "chunk-indexed traces (cachegen, uniform): duration_s counts chunks, statistics are per chunk\n";
}

int run_stats(const StatsOptions& o) {
  std::vector<traces::NamedTrace> rows;
  for (const std::string& arg : o.inputs) traces::collect_traces(arg, o.format, rows);
  std::vector<traces::TraceStats> stats;
  for (traces::NamedTrace& row : rows) {
    if (o.factor != 1) row.trace = traces::scale(row.trace, o.factor);
    stats.push_back(traces::trace_stats(row.trace, o.bin_s));
  }
  if (!o.json) {
    print_table(rows, stats);
    return 0;
  }
  nlohmann::json out = nlohmann::json::array();
  for (size_t i = 0; i < rows.size(); ++i) {
    nlohmann::json object = traces::to_json(stats[i]);
    object["format"] = rows[i].format;
    out.push_back(std::move(object));
  }
  std::cout << (out.size() == 1 ? out.front() : out).dump(2) << std::endl;
  return 0;
}

int stats_main(const std::vector<std::string>& args) { return parse_and_run<StatsOptions>(args, parse_stats, run_stats); }

const std::vector<Command>& subcommands() {
  static const std::vector<Command> list = {
      {"stats", "duration, time-weighted mean, p10/p50/p90 and cv of traces", stats_main}};
  return list;
}

void print_usage(std::ostream& out) {
  out << "usage: kvstream trace <subcommand> [options]   (kvstream trace <subcommand> --help)\n\nsubcommands:\n";
  for (const Command& c : subcommands()) out << "  " << std::left << std::setw(8) << c.name << c.summary << "\n";
}

}  // namespace

int trace_main(const std::vector<std::string>& args) {
  if (!args.empty() && (args[0] == "--help" || args[0] == "-h" || args[0] == "help")) {
    print_usage(std::cout);
    return 0;
  }
  if (args.empty()) {
    print_usage(std::cerr);
    return 2;
  }
  for (const Command& c : subcommands())
    if (c.name == args[0]) return c.run(std::vector<std::string>(args.begin() + 1, args.end()));
  throw po::error("unknown subcommand \"" + args[0] + "\"");
}

}  // namespace kvstream::cli
