#include "profiling/shipped_profiles.h"

#include <algorithm>
#include <stdexcept>

#ifndef KVSTREAM_HARDWARE_DIR
#error "KVSTREAM_HARDWARE_DIR (profiling/hardware) must be defined by the build"
#endif

namespace kvstream::profiling {

namespace fs = std::filesystem;

fs::path shipped_hardware_dir() { return KVSTREAM_HARDWARE_DIR; }

std::vector<std::string> shipped_hardware_profiles(const fs::path& dir) {
  std::vector<std::string> names;
  for (const fs::path& folder : {dir, dir / "measured"}) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(folder, ec))
      if (entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

HardwareProfileChoice choose_hardware_profile(const std::string& arg, const fs::path& dir) {
  std::error_code ec;
  if (fs::is_regular_file(arg, ec)) return {arg, ""};
  const fs::path measured = dir / "measured" / (arg + ".json"), analytic = dir / (arg + ".json");
  const bool has_measured = fs::is_regular_file(measured, ec), has_analytic = fs::is_regular_file(analytic, ec);
  if (has_measured) return {measured.string(), has_analytic ? analytic.string() : ""};
  if (has_analytic) return {analytic.string(), ""};
  std::string names;
  for (const auto& name : shipped_hardware_profiles(dir)) names += " " + name;
  throw std::runtime_error("hardware profile \"" + arg + "\" is neither a file nor a shipped profile (shipped:" + names + ")");
}

std::string resolve_hardware_profile(const std::string& arg) { return choose_hardware_profile(arg).file; }

}  // namespace kvstream::profiling
