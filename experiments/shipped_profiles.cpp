#include "shipped_profiles.h"

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#ifndef KVSTREAM_HARDWARE_DIR
#error "KVSTREAM_HARDWARE_DIR (experiments/hardware) must be defined by the build"
#endif

namespace kvstream::experiments {

namespace fs = std::filesystem;

std::vector<std::string> shipped_hardware_profiles() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(KVSTREAM_HARDWARE_DIR, ec))
    if (entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::string resolve_hardware_profile(const std::string& arg) {
  std::error_code ec;
  if (fs::is_regular_file(arg, ec)) return arg;
  const fs::path shipped = fs::path(KVSTREAM_HARDWARE_DIR) / (arg + ".json");
  if (fs::is_regular_file(shipped, ec)) return shipped.string();
  std::string names;
  for (const auto& name : shipped_hardware_profiles()) names += " " + name;
  throw std::runtime_error("hardware profile \"" + arg + "\" is neither a file nor a shipped profile (shipped:" + names + ")");
}

}  // namespace kvstream::experiments
