// kvstream: streaming compressed LLM KV caches over measured networks. `kvstream --help` lists commands.
#include <iostream>
#include <string>
#include <vector>

#include "cli/command.h"

int main(int argc, char** argv) {
  using namespace kvstream::cli;
  const std::vector<Command> commands = {encode_command(), decode_command(), codec_bench_command(), cdf_build_command(),
                                         quality_command(), profile_prefill_command(), profile_decode_command(),
                                         kv_export_command(), trace_command(), simulate_command(), sim_bench_command(),
                                         run_command(), merge_command()};
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
