// `kvstream merge DIR... --out DIR`: the shards of one experiment joined into one result directory.
#include <iostream>

#include "cli/command.h"
#include "experiments/results_merge.h"

namespace kvstream::cli {

Command merge_command() {
  return {"merge", "join the result directories of `kvstream run --shard i/N` into one",
          [](const std::vector<std::string>& args) {
            std::vector<std::string> dirs;
            std::string out;
            bool no_figures = false;
            po::options_description options("options");
            options.add_options()
              ("dirs", po::value(&dirs)->multitoken()->required(), "shard result directories")
              ("out", po::value(&out)->required(), "the merged result directory (new)")
              ("no-figures", po::bool_switch(&no_figures), "do not call plotting/plot.py");
            po::positional_options_description positional;
            positional.add("dirs", -1);
            po::variables_map vm;
            if (!parse_or_help(args,
                               "usage: kvstream merge DIR [DIR ...] --out DIR [--no-figures]\n\n"
                               "Checks that the directories hold shards of one config that together cover its grid,\n"
                               "then writes runs.jsonl, summary.csv, levels.csv and config.json identical to a\n"
                               "single-machine run, a manifest listing the shards, and the figures.",
                               options, vm, &positional))
              return 0;
            std::vector<std::filesystem::path> paths(dirs.begin(), dirs.end());
            const auto report = experiments::merge_results(paths, out, !no_figures, std::cerr);
            if (!report.summary.empty()) experiments::print_summary_table(std::cout, report.summary);
            std::cout << "merged " << report.runs << " runs from " << dirs.size() << " directories into " << out << "\n";
            return 0;
          }};
}

}  // namespace kvstream::cli
