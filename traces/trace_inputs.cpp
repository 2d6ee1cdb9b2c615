#include "traces/trace_inputs.h"

#include <glob.h>

#include <algorithm>
#include <filesystem>
#include <regex>

#include "common/data_resolver.h"
#include "traces/trace_generators.h"

namespace kvstream::traces {

namespace {

namespace fs = std::filesystem;
using traces::BandwidthTrace;

// An input given on the command line: as given, else a directory or file under a data root (the
// resolver's not-found error names every place searched).
fs::path locate(const std::string& arg) {
  std::error_code ec;
  if (fs::exists(arg, ec)) return arg;
  try {
    return common::resolve_data_dir(arg);
  } catch (const common::DataNotFound&) {
    return common::resolve_input(arg);  // its error names every place searched
  }
}

// Every trace of one file; `format` nullopt sniffs it.
void read_file(const fs::path& path, std::optional<traces::TraceFormat> format, std::vector<NamedTrace>& out) {
  const std::string name = traces::format_name(format ? *format : traces::sniff_trace_format(path.string()));
  for (BandwidthTrace& t : traces::read_traces(path.string(), format)) out.push_back({std::move(t), name});
}

// The traces an argument stands for: a generator spec, FILE#k, a file (all its traces) or a
// directory (every file below it, in path order).

// The files a glob pattern (*, ?, [...]) matches, as given or under the first data root where it matches.
std::vector<std::string> glob_matches(const std::string& pattern) {
  std::vector<std::string> roots = {""};
  if (!fs::path(pattern).is_absolute())
    for (const auto& root : common::data_search_roots()) roots.push_back(root.string() + "/");
  for (const auto& root : roots) {
    glob_t found{};
    const int status = ::glob((root + pattern).c_str(), 0, nullptr, &found);
    std::vector<std::string> matches(found.gl_pathv, found.gl_pathv + (status == 0 ? found.gl_pathc : 0));
    ::globfree(&found);
    if (!matches.empty()) return matches;  // glob(3) sorts them
  }
  throw common::DataNotFound("the pattern \"" + pattern + "\" matches no file (searched as given and under every data root)");
}

}  // namespace

void collect_traces(const std::string& arg, std::optional<traces::TraceFormat> format, std::vector<NamedTrace>& out) {
  std::error_code ec;
  if (arg.find_first_of("*?[") != std::string::npos && !fs::exists(arg, ec)) {
    for (const auto& match : glob_matches(arg)) collect_traces(match, format, out);
    return;
  }
  if (traces::is_generator_spec(arg) && !fs::exists(arg, ec)) {
    out.push_back({traces::make_generated_trace(arg), "generator"});
    return;
  }
  static const std::regex indexed("(.*)#([0-9]+)");
  std::smatch match;
  if (!fs::exists(arg, ec) && std::regex_match(arg, match, indexed)) {
    const fs::path path = locate(match[1]);
    const std::string name = traces::format_name(format ? *format : traces::sniff_trace_format(path.string()));
    out.push_back({traces::read_trace(path.string() + "#" + match[2].str(), format), name});
    return;
  }
  const fs::path path = locate(arg);
  if (!fs::is_directory(path, ec)) {
    read_file(path, format, out);
    return;
  }
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(path))
    if (entry.is_regular_file()) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  if (files.empty()) throw traces::TraceError("directory '" + path.string() + "' holds no trace files");
  for (const fs::path& file : files) read_file(file, format, out);
}

traces::BandwidthTrace load_one_trace(const std::string& arg, const std::string& format_name) {
  std::vector<NamedTrace> found;
  collect_traces(arg, traces::parse_trace_format(format_name), found);
  if (found.size() != 1)
    throw traces::TraceError("\"" + arg + "\" holds " + std::to_string(found.size()) +
                             " traces; name one as FILE#k (k from 0)");
  return std::move(found.front().trace);
}

}  // namespace kvstream::traces
