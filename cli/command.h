// The `kvstream` CLI: one file per command, each a name, a one-line summary and a run function
// taking the arguments after the command name. Commands print --help and exit 0; bad usage exits 2;
// a runtime error (bad input file, corrupt bitstream) prints "kvstream <cmd>: error: ..." and exits 1.
#pragma once
#include <boost/program_options.hpp>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

namespace kvstream::cli {

struct Command {
  std::string name;
  std::string summary;
  std::function<int(const std::vector<std::string>& args)> run;
};

Command encode_command();
Command decode_command();
Command codec_bench_command();
Command cdf_build_command();
Command quality_command();
Command profile_prefill_command();
Command profile_decode_command();
Command kv_export_command();
Command trace_command();
Command simulate_command();
Command sim_bench_command();
Command run_command();
Command merge_command();

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
