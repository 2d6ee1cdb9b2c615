// Hardware profiles shipped in experiments/hardware/ (README "Prefill timing profiles"), found by
// name so that `--hardware a40_mistral-7b` works from any directory.
#pragma once
#include <string>
#include <vector>

namespace kvstream::experiments {

std::vector<std::string> shipped_hardware_profiles();  // names without .json, sorted
// `arg` as a path when it exists, else experiments/hardware/<arg>.json; otherwise a
// std::runtime_error listing the shipped names.
std::string resolve_hardware_profile(const std::string& arg);

}  // namespace kvstream::experiments
