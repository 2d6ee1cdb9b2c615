#include "common/data_resolver.h"

#include <cstdlib>
#include <fstream>
#include <sstream>

#ifndef KVSTREAM_SOURCE_DIR
#error "KVSTREAM_SOURCE_DIR (the repository root) must be defined by the build"
#endif

namespace kvstream::common {
namespace {

// The variable's value, or "" when it is unset.
std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}

// One indented line per root, each followed by `relative` (empty: the roots themselves).
std::string root_lines(const std::string& relative) {
  std::ostringstream out;
  for (const auto& root : data_search_roots()) out << "\n  " << (relative.empty() ? root : root / relative).string();
  return out.str();
}

// Whether scripts/fetch-data.sh can fetch `relative` (a file, or a folder holding some): the files
// of scripts/data_files.sha256 ("SHA256 PATH" lines) and SmolLM2 under models/smollm2/.
bool fetchable(const std::string& relative) {
  if (relative == "models/smollm2" || relative.rfind("models/smollm2/", 0) == 0) return true;
  std::ifstream listed(std::filesystem::path(KVSTREAM_SOURCE_DIR) / "scripts" / "data_files.sha256");
  std::string sha, path;
  while (listed >> sha >> path)
    if (path == relative || path.rfind(relative + "/", 0) == 0) return true;
  return false;
}

// What to do about a missing file or folder: fetch it, or check its name.
std::string fetch_hint(const std::string& relative) {
  if (fetchable(relative)) return "\nrun scripts/fetch-data.sh to download it into " + data_cache_dir().string();
  return "\nno data source lists '" + relative + "' (docs/DATA.md lists the files kvstream uses): check its name";
}

}  // namespace

std::filesystem::path data_cache_dir() {
  const std::string xdg = env("XDG_CACHE_HOME");
  const std::filesystem::path cache =
      xdg.empty() ? std::filesystem::path(env("HOME")) / ".cache" : std::filesystem::path(xdg);
  return cache / "kvstream" / "data";
}

std::vector<std::filesystem::path> data_search_roots() {
  std::vector<std::filesystem::path> roots;
  if (const std::string override_root = env("KVSTREAM_DATA"); !override_root.empty()) {
    roots.emplace_back(override_root);
  }
  roots.push_back((std::filesystem::path(KVSTREAM_SOURCE_DIR) / ".." / "shared" / "data").lexically_normal());
  roots.push_back(data_cache_dir());
  return roots;
}

std::filesystem::path resolve_data(const std::string& relative) {
  for (const auto& root : data_search_roots()) {
    std::filesystem::path candidate = root / relative;
    std::error_code ec;  // an unreadable root counts as "not here", not as an error
    if (std::filesystem::is_regular_file(candidate, ec)) return candidate;
  }
  throw DataNotFound("data file '" + relative + "' not found; searched:" + root_lines(relative) + fetch_hint(relative));
}

std::filesystem::path resolve_data_dir(const std::string& relative) {
  for (const auto& root : data_search_roots()) {
    std::filesystem::path candidate = root / relative;
    std::error_code ec;
    if (std::filesystem::is_directory(candidate, ec)) return candidate;
  }
  throw DataNotFound("data folder '" + relative + "' not found; searched:" + root_lines(relative) + fetch_hint(relative));
}

std::filesystem::path resolve_input(const std::string& arg) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(arg, ec)) return arg;
  if (std::filesystem::is_directory(arg, ec)) throw DataNotFound("input file '" + arg + "' is a directory, not a file");
  try {
    return resolve_data(arg);
  } catch (const DataNotFound&) {
    const std::string cwd = std::filesystem::current_path(ec).string();
    throw DataNotFound("input file '" + arg + "' not found: not a file as given (working directory " + cwd +
                       ") nor under any data root:" + root_lines("") + fetch_hint(arg));
  }
}

}  // namespace kvstream::common
