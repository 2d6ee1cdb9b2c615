// The hardware profile the simulator reads (written by `kvstream profile-prefill`, README "Prefill
// timing profiles"): the prefill cost model of a (device, model) pair and where it came from.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace kvstream::sim {

// Prefill of n chunk tokens after p prefix tokens: t_s = a + b·n + c·n·(p + n/2). b covers the
// per-token matmuls, c the attention over the prefix and the causal half of the chunk.
struct PrefillCostModel {
  double a = 0, b = 0, c = 0;
  double rms_relative_error = 0;  // over the points it was fitted to
  double seconds(double prefix_tokens, double chunk_tokens) const {
    return a + b * chunk_tokens + c * chunk_tokens * (prefix_tokens + chunk_tokens / 2);
  }
};

struct HardwareProfile {
  std::string device;  // "cpu", "a40", ...
  std::string kind;    // "measured" or "analytic"
  std::string model;   // the model or architecture the costs are for
  PrefillCostModel prefill;
};

// Throws JsonError "<where>: <json path>: ..." when the profile lacks prefill_cost_model.{a,b,c}
// or a coefficient is negative.
HardwareProfile hardware_profile_from_json(const nlohmann::json& json, const std::string& where = "hardware profile");
HardwareProfile read_hardware_profile(const std::string& path);

}  // namespace kvstream::sim
