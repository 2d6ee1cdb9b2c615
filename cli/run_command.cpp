// `kvstream run CONFIG.json`: an experiment sweep (experiments/SCHEMA.md) into results/<name>/.
#include <unistd.h>

#include <filesystem>
#include <iostream>

#include "cli/command.h"
#include "cli/model_backend.h"
#include "experiments/experiment_runner.h"
#include "profiling/profile_cache.h"

namespace kvstream::cli {

Command run_command() {
  return {"run", "run an experiment config (a sweep) into results/<name>/: runs.jsonl, summary.csv, figures",
          [](const std::vector<std::string>& args) {
            std::string config_path, out, shard, cache;
            int jobs = 1;
            bool resume = false, overwrite = false, profiles_only = false, no_figures = false;
            po::options_description options("options");
            options.add_options()
              ("config", po::value(&config_path)->required(), "experiment config JSON (experiments/SCHEMA.md)")
              ("out", po::value(&out), "result directory (default results/<name>)")
              ("jobs,j", po::value(&jobs)->default_value(1), "simulation threads")
              ("resume", po::bool_switch(&resume), "continue an interrupted run in --out: finished runs are kept, none repeated")
              ("overwrite", po::bool_switch(&overwrite), "replace the results in --out instead of refusing to touch them")
              ("shard", po::value(&shard)->default_value("0/1"), "run only shard i of N (runs with index mod N = i), 0 <= i < N")
              ("profile-cache", po::value(&cache), "context-profile cache directory (default $KVSTREAM_PROFILE_CACHE or ~/.cache/kvstream/profiles)")
              ("profiles-only", po::bool_switch(&profiles_only), "stop after profiling the contexts (fills the cache for shards)")
              ("no-figures", po::bool_switch(&no_figures), "do not call plotting/plot.py");
            po::positional_options_description positional;
            positional.add("config", 1);
            po::variables_map vm;
            if (!parse_or_help(args,
                               "usage: kvstream run CONFIG.json [--out DIR] [--jobs N] [--resume | --overwrite] [--shard i/N]\n"
                               "                    [--profile-cache DIR] [--profiles-only] [--no-figures]\n\n"
                               "Profiles the config's contexts (cached), expands its grid of traces x policies x SLOs x\n"
                               "hardware x workloads x repetitions, runs it, and writes DIR/config.json, manifest.json,\n"
                               "runs.jsonl (one line per run, appended as runs finish), summary.csv, levels.csv,\n"
                               "profiles/ and figures/. Interrupted? Run again with --resume. On a cluster, run shards\n"
                               "i/N into separate directories (sharing --profile-cache) and join them with kvstream merge.",
                               options, vm, &positional))
              return 0;
            if (jobs < 1) throw po::error("--jobs must be >= 1");
            if (resume && overwrite) throw po::error("--resume and --overwrite exclude each other");
            experiments::RunnerOptions o;
            o.out_dir = out;
            o.jobs = jobs;
            o.resume = resume;
            o.overwrite = overwrite;
            try {
              o.shard = experiments::Shard::parse(shard);
            } catch (const std::invalid_argument& e) {
              throw po::error(e.what());
            }
            o.profile_cache = cache;
            o.measure_model_contexts = model_context_measurer();
            o.profiles_only = profiles_only;
            o.figures = !no_figures;
            o.terminal = ::isatty(STDERR_FILENO);
            o.command_line = "kvstream run";
            for (const auto& a : args) o.command_line += " " + a;
            std::error_code ec;
            if (!std::filesystem::is_regular_file(config_path, ec))
              throw std::runtime_error(config_path + ": no such config file");
            const auto config = experiments::read_experiment_config(config_path);
            const auto report = experiments::run_experiment(config, config_path, o, std::cerr);
            if (profiles_only) {
              std::cout << "profiles in " << report.out_dir.string() << "/profiles and the cache\n";
              return 0;
            }
            if (!report.summary.empty()) experiments::print_summary_table(std::cout, report.summary);
            std::cout << "results: " << report.out_dir.string() << " (" << report.shard_runs << " runs"
                      << (report.resumed_runs ? ", " + std::to_string(report.resumed_runs) + " resumed" : "")
                      << (report.figures_written ? ", figures in figures/" : "") << ")\n";
            return 0;
          }};
}

}  // namespace kvstream::cli
