// `kvstream data which FILE...` and `kvstream data roots`: the data resolver (common/data_resolver.h)
// for scripts, so that none of them states the search order again.
#include <iostream>

#include "cli/command.h"
#include "common/data_resolver.h"

namespace kvstream::cli {
namespace {

struct Options {
  std::string action;
  std::vector<std::string> files;
};

std::optional<Options> parse(const std::vector<std::string>& args) {
  Options o;
  po::options_description options("options");
  options.add_options()
    ("action", po::value(&o.action)->required(), "which | roots")
    ("file", po::value(&o.files)->multitoken(), "data files (which)");
  po::positional_options_description positional;
  positional.add("action", 1).add("file", -1);
  po::variables_map vm;
  if (!parse_or_help(args,
                     "usage: kvstream data which FILE...\n"
                     "       kvstream data roots\n\n"
                     "which: prints where each FILE is found, one absolute path per line, as every command\n"
                     "finds a file argument: as given (absolute, or relative to the working directory), else\n"
                     "as a data path (e.g. models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf) under the first\n"
                     "root that has it. A file found nowhere is an error (exit 1) that names every place\n"
                     "searched and, for a file scripts/fetch-data.sh provides, how to fetch it.\n"
                     "roots: prints the roots searched, in order: $KVSTREAM_DATA (when set), shared/data\n"
                     "beside the repository, the user cache (~/.cache/kvstream/data).",
                     options, vm, &positional))
    return std::nullopt;
  if (o.action != "which" && o.action != "roots")
    throw po::error("unknown action \"" + o.action + "\" (expected which or roots)");
  if (o.action == "which" && o.files.empty()) throw po::error("which needs at least one FILE");
  if (o.action == "roots" && !o.files.empty()) throw po::error("roots takes no FILE");
  return o;
}

int run(const Options& o) {
  if (o.action == "roots") {
    for (const auto& root : common::data_search_roots()) std::cout << root.string() << "\n";
    return 0;
  }
  // Every file is resolved before anything is printed: a script reads either all paths or an error.
  std::vector<std::filesystem::path> found;
  for (const auto& file : o.files) found.push_back(std::filesystem::absolute(common::resolve_input(file)));
  for (const auto& path : found) std::cout << path.string() << "\n";
  return 0;
}

}  // namespace

int data_main(const std::vector<std::string>& args) { return parse_and_run<Options>(args, parse, run); }

}  // namespace kvstream::cli
