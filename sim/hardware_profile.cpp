#include "hardware_profile.h"

#include "json_reader.h"

namespace kvstream::sim {

HardwareProfile hardware_profile_from_json(const nlohmann::json& json, const std::string& where) {
  const JsonNode root(json, where);
  HardwareProfile profile;
  profile.device = root.at("device").string();
  profile.kind = root.at("kind").string();
  profile.model = root.has("model") ? root.at("model").string() : "";
  const JsonNode fit = root.at("prefill_cost_model");
  profile.prefill.a = fit.at("a").number_at_least(0);
  profile.prefill.b = fit.at("b").number_at_least(0);
  profile.prefill.c = fit.at("c").number_at_least(0);
  if (fit.has("rms_relative_error")) profile.prefill.rms_relative_error = fit.at("rms_relative_error").number_at_least(0);
  return profile;
}

HardwareProfile read_hardware_profile(const std::string& path) {
  return hardware_profile_from_json(read_json_file(path), path);
}

}  // namespace kvstream::sim
