// The `kvstream` CLI: one file per command (cli/<name>_command.cpp). A command file defines its
// Options, a parse function that reads them from the arguments after the command name (it prints
// --help and returns nothing when asked) and a run function, and exports <name>_main, which
// cli/main.cpp lists with the command's name and summary.
// --help exits 0; bad usage throws po::error (exit 2); a runtime error (bad input file, corrupt
// bitstream) throws anything else and prints "kvstream <cmd>: error: ..." (exit 1).
#pragma once
#include <boost/program_options.hpp>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace kvstream::cli {

using CommandMain = int (*)(const std::vector<std::string>& args);

struct Command {
  std::string name;
  std::string summary;
  CommandMain run;
};

template <class Options>
int parse_and_run(const std::vector<std::string>& args, std::optional<Options> (*parse)(const std::vector<std::string>&),
                  int (*run)(const Options&)) {
  const std::optional<Options> options = parse(args);
  return options ? run(*options) : 0;
}

int encode_main(const std::vector<std::string>& args);
int decode_main(const std::vector<std::string>& args);
int codec_bench_main(const std::vector<std::string>& args);
int cdf_build_main(const std::vector<std::string>& args);
int quality_main(const std::vector<std::string>& args);          // needs LibTorch (cli/model_backend.h)
int rd_main(const std::vector<std::string>& args);               // needs LibTorch
int calibrate_main(const std::vector<std::string>& args);        // needs LibTorch
int calibrate_ladder_main(const std::vector<std::string>& args); // needs LibTorch
int profile_prefill_main(const std::vector<std::string>& args);  // needs LibTorch
int profile_decode_main(const std::vector<std::string>& args);
int kv_export_main(const std::vector<std::string>& args);        // needs LibTorch
int trace_main(const std::vector<std::string>& args);
int simulate_main(const std::vector<std::string>& args);
int emulate_main(const std::vector<std::string>& args);
int link_check_main(const std::vector<std::string>& args);
int fidelity_main(const std::vector<std::string>& args);
int sim_bench_main(const std::vector<std::string>& args);
int run_main(const std::vector<std::string>& args);
int merge_main(const std::vector<std::string>& args);
int plot_main(const std::vector<std::string>& args);
int slurm_main(const std::vector<std::string>& args);
int data_main(const std::vector<std::string>& args);

namespace po = boost::program_options;

// Parses `args` against `options` (with --help added); returns false after printing help.
// Throws po::error on bad usage.
bool parse_or_help(const std::vector<std::string>& args, const std::string& usage, po::options_description& options,
                   po::variables_map& vm, const po::positional_options_description* positional = nullptr);

// Resolves an input path literally or through the data resolver (KVSTREAM_DATA, ../shared/data, cache).
std::string input_path(const std::string& arg);

// "1,2,3" -> {1, 2, 3}; values below `minimum` or non-integers are a po::error naming --option.
std::vector<int64_t> parse_int_list(const std::string& option, const std::string& text, int64_t minimum);

// "--codecs" help text: every registered codec with its summary.
std::string codec_list_help();

}  // namespace kvstream::cli
