// `kvstream merge DIR... --out DIR`: the shards of one experiment joined into one result directory.
#include <iostream>

#include "cli/command.h"
#include "experiments/results_merge.h"

namespace kvstream::cli {
namespace {

struct Options {
  std::vector<std::string> dirs;
  std::string out;
  bool figures = true;
  bool compress_runs = false;
};

std::optional<Options> parse(const std::vector<std::string>& args) {
  Options o;
  bool no_figures = false;
  po::options_description options("options");
  options.add_options()
    ("dirs", po::value(&o.dirs)->multitoken()->required(), "shard result directories")
    ("out", po::value(&o.out)->required(), "the merged result directory (new)")
    ("no-figures", po::bool_switch(&no_figures), "do not call plotting/plot.py")
    ("compress-runs", po::bool_switch(&o.compress_runs), "write runs.jsonl.zst (zstd) instead of runs.jsonl");
  po::positional_options_description positional;
  positional.add("dirs", -1);
  po::variables_map vm;
  if (!parse_or_help(args,
                     "usage: kvstream merge DIR [DIR ...] --out DIR [--no-figures] [--compress-runs]\n\n"
                     "Checks that the directories hold shards of one config that together cover its grid,\n"
                     "then writes runs.jsonl, summary.csv, levels.csv and config.json identical to a\n"
                     "single-machine run, a manifest listing the shards, and the figures. The shards' runs\n"
                     "may be runs.jsonl or runs.jsonl.zst; --compress-runs writes runs.jsonl.zst.",
                     options, vm, &positional))
    return std::nullopt;
  o.figures = !no_figures;
  return o;
}

int run(const Options& o) {
  const std::vector<std::filesystem::path> dirs(o.dirs.begin(), o.dirs.end());
  const auto report = experiments::merge_results(
      dirs, o.out, o.figures, o.compress_runs ? experiments::RunLogFormat::kZstd : experiments::RunLogFormat::kPlain, std::cerr);
  if (!report.summary.empty()) experiments::print_summary_table(std::cout, report.summary);
  std::cout << "merged " << report.runs << " runs from " << dirs.size() << " directories into " << o.out << "\n";
  return 0;
}

}  // namespace

int merge_main(const std::vector<std::string>& args) { return parse_and_run<Options>(args, parse, run); }

}  // namespace kvstream::cli
