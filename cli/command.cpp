#include "cli/command.h"

#include <algorithm>
#include <iostream>
#include <sstream>

#include "codec/codec.h"
#include "common/data_resolver.h"

namespace kvstream::cli {

bool parse_or_help(const std::vector<std::string>& args, const std::string& usage, po::options_description& options,
                   po::variables_map& vm, const po::positional_options_description* positional) {
  options.add_options()("help,h", "show this help");
  po::command_line_parser parser(args);
  parser.options(options);
  if (positional) parser.positional(*positional);
  po::store(parser.run(), vm);
  if (vm.count("help")) {
    std::cout << usage << "\n\n" << options << "\n";
    return false;
  }
  po::notify(vm);
  return true;
}

std::string input_path(const std::string& arg) { return common::resolve_input(arg).string(); }

std::vector<int64_t> parse_int_list(const std::string& option, const std::string& text, int64_t minimum) {
  std::vector<int64_t> values;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    size_t used = 0;
    try {
      values.push_back(std::stoll(item, &used));
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size())
      throw po::error("--" + option + " expects comma-separated integers, got \"" + text + "\"");
    if (values.back() < minimum) throw po::error("--" + option + " values must be at least " + std::to_string(minimum));
  }
  return values;
}

std::string codec_list_help() {
  std::string text = "codecs (spec = name[:key=value,...]):\n";
  for (const auto& entry : codec::codec_registry())
    text += "  " + entry.name + std::string(10 - std::min<size_t>(9, entry.name.size()), ' ') + entry.summary + "\n";
  return text;
}

}  // namespace kvstream::cli
