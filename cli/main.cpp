// kvstream: streaming compressed LLM KV caches over measured networks. `kvstream --help` lists commands.
#include <csignal>
#include <iostream>
#include <string>
#include <vector>

#include "cli/command.h"

int main(int argc, char** argv) {
  using namespace kvstream::cli;
  // Beyond a file size limit (ulimit -f) a write then fails with "File too large", which the
  // writers report and clean up after, instead of the signal killing the process mid-write.
  std::signal(SIGXFSZ, SIG_IGN);
  const std::vector<Command> commands = {
      {"encode", "encode a KV dump (safetensors) into a .kvs file of chunk bitstreams", encode_main},
      {"decode", "decode a .kvs file back to a KV dump (safetensors)", decode_main},
      {"codec-bench", "size, error and single-thread speed of codecs and levels on a KV dump", codec_bench_main},
      {"cdf-build", "build an offline per-model CDF table from profiling contexts", cdf_build_main},
      {"quality", "perplexity, KL and top-1 agreement (or task accuracy/F1) of the model on decoded KV, per codec and level",
       quality_main},
      {"rd", "rate-distortion curves of codecs (bytes vs KL on text windows) and their BD-rate against CacheGen", rd_main},
      {"calibrate", "fit the transform codec to a model on calibration text: per-layer PCA bases and rANS tables (.kvcal)",
       calibrate_main},
      {"calibrate-ladder", "choose a codec's levels (cachegen bins per layer, transform distortions) to land on target KLs",
       calibrate_ladder_main},
      {"profile-prefill", "time prefill over a (prefix, chunk) grid and fit the simulator's cost model", profile_prefill_main},
      {"profile-decode", "measure decode throughput per codec and level into a hardware profile", profile_decode_main},
      {"kv-export", "prefill text windows with a model and write their KV cache (safetensors)", kv_export_main},
      {"trace", "bandwidth traces: statistics of trace files and generated traces", trace_main},
      {"simulate", "stream contexts over a bandwidth trace with an adaptation policy: TTFT, bytes, quality", simulate_main},
      {"emulate", "simulate's runs with the KV over real TCP through a trace-shaped emulated link (needs root)", emulate_main},
      {"link-check", "how exactly an emulated link delivers a trace: delivered bytes per window vs its integral (needs root)",
       link_check_main},
      {"fidelity", "the simulator held against the emulator: TTFT and chunk-time errors per link model (needs root)",
       fidelity_main},
      {"sim-bench", "simulator speed: events/s under load, runs/s of a 10,000-run sweep", sim_bench_main},
      {"run", "run an experiment config (a sweep) into results/<name>/: runs.jsonl, summary.csv, figures", run_main},
      {"merge", "join the result directories of `kvstream run --shard i/N` into one", merge_main},
      {"plot", "draw a result directory's figures again: other kinds, PDF for a paper", plot_main},
      {"slurm", "run an experiment config on a Slurm cluster: profiling, grid and merge jobs (sbatch)", slurm_main},
      {"data", "where a data file is found (the search order below), for scripts", data_main}};
  auto usage = [&](std::ostream& out) {
    out << "usage: kvstream <command> [options]   (kvstream <command> --help for its options)\n\ncommands:\n";
    for (const auto& c : commands) out << "  " << c.name << std::string(18 - std::min<size_t>(17, c.name.size()), ' ') << c.summary << "\n";
    out << "\nData files given by relative path are looked up as given, then in $KVSTREAM_DATA,\n"
           "../shared/data beside the repository, and ~/.cache/kvstream/data (scripts/fetch-data.sh).\n";
  };
  if (argc < 2) {
    usage(std::cerr);
    return 2;
  }
  const std::string name = argv[1];
  if (name == "--help" || name == "-h" || name == "help") {
    usage(std::cout);
    return 0;
  }
  for (const auto& c : commands) {
    if (c.name != name) continue;
    const std::vector<std::string> args(argv + 2, argv + argc);
    try {
      return c.run(args);
    } catch (const po::error& e) {
      std::cerr << "kvstream " << name << ": " << e.what() << " (see kvstream " << name << " --help)\n";
      return 2;
    } catch (const std::exception& e) {
      std::cerr << "kvstream " << name << ": error: " << e.what() << "\n";
      return 1;
    }
  }
  std::cerr << "kvstream: unknown command \"" << name << "\"\n";
  usage(std::cerr);
  return 2;
}
