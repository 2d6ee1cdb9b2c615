// Hardware profiles shipped in profiling/hardware/ (docs/PROFILES.md), found by
// name so that `--hardware a40_mistral-7b` works from any directory.
//
// GPU profiles measured by scripts/gpu-prefill.sh live in profiling/hardware/measured/, named like
// the analytic ones (<gpu>_<model>.json). A measured profile wins over the analytic profile of the
// same name wherever one exists, and the choice says which analytic profile it replaced.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

namespace kvstream::profiling {

std::filesystem::path shipped_hardware_dir();  // profiling/hardware of the source tree

// Names without .json, sorted, each once (measured/ and the folder itself together).
std::vector<std::string> shipped_hardware_profiles(const std::filesystem::path& dir = shipped_hardware_dir());

struct HardwareProfileChoice {
  std::string file;      // the profile to read
  std::string replaced;  // the <dir>/<name>.json (for a GPU: analytic) that measured/<name>.json replaced, or ""
};

// `arg` as a path when it exists (never replaced), else the shipped name: <dir>/measured/<arg>.json
// over <dir>/<arg>.json. Otherwise a std::runtime_error listing the shipped names.
HardwareProfileChoice choose_hardware_profile(const std::string& arg,
                                              const std::filesystem::path& dir = shipped_hardware_dir());
std::string resolve_hardware_profile(const std::string& arg);  // choose_hardware_profile(arg).file

}  // namespace kvstream::profiling
