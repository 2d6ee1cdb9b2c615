#include "sim/hardware_profile.h"

#include "common/json_reader.h"

namespace kvstream::sim {

using common::JsonNode;

namespace {

std::string non_empty_string(const JsonNode& node) {
  std::string text = node.string();
  if (text.empty()) node.fail("expected a non-empty string");
  return text;
}

DecodeThroughputs decode_throughputs(const JsonNode& node) {
  node.only_keys({"source", "device", "throughputs"});
  DecodeThroughputs decode;
  decode.source = non_empty_string(node.at("source"));
  decode.device = non_empty_string(node.at("device"));
  const JsonNode list = node.at("throughputs");
  if (list.size() == 0) list.fail("expected at least one throughput");
  for (size_t i = 0; i < list.size(); ++i) {
    const JsonNode entry = list.at(i);
    entry.only_keys({"codec", "level", "fp16_bytes_per_s"});
    DecodeThroughput t;
    t.codec = non_empty_string(entry.at("codec"));
    const int64_t level = entry.at("level").integer_at_least(1);
    if (level > 1000) entry.at("level").fail("expected a level <= 1000, got " + std::to_string(level));
    t.level = static_cast<int>(level);
    t.fp16_bytes_per_s = entry.at("fp16_bytes_per_s").number();
    if (!(t.fp16_bytes_per_s > 0))
      entry.at("fp16_bytes_per_s").fail("expected a throughput > 0 fp16 bytes/s, got " +
                                        entry.at("fp16_bytes_per_s").value().dump());
    if (!(t.fp16_bytes_per_s >= 1 && t.fp16_bytes_per_s <= 1e15))  // keeps every decode time finite
      entry.at("fp16_bytes_per_s").fail("expected a throughput in [1, 1e15] fp16 bytes/s, got " +
                                        entry.at("fp16_bytes_per_s").value().dump());
    if (decode.find(t.codec, t.level))
      entry.fail("codec \"" + t.codec + "\" level " + std::to_string(t.level) + " is given twice");
    decode.throughputs.push_back(std::move(t));
  }
  return decode;
}

}  // namespace

const DecodeThroughput* DecodeThroughputs::find(const std::string& codec, int level) const {
  for (const auto& t : throughputs)
    if (t.codec == codec && t.level == level) return &t;
  return nullptr;
}

HardwareProfile hardware_profile_from_json(const nlohmann::json& json, const std::string& where) {
  const JsonNode root(json, where);
  HardwareProfile profile;
  profile.device = root.at("device").string();
  profile.kind = root.at("kind").string();
  profile.model = root.has("model") ? root.at("model").string() : "";
  const JsonNode fit = root.at("prefill_cost_model");
  // a (s), b (s/token), c (s/token^2): bounded far beyond any GPU so that every time stays finite.
  const auto coefficient = [&](const char* key) {
    const double x = fit.at(key).number_at_least(0);
    if (x > 1e6) fit.at(key).fail("expected a coefficient of at most 1e6, got " + fit.at(key).value().dump());
    return x;
  };
  profile.prefill.a = coefficient("a");
  profile.prefill.b = coefficient("b");
  profile.prefill.c = coefficient("c");
  if (fit.has("rms_relative_error")) profile.prefill.rms_relative_error = fit.at("rms_relative_error").number_at_least(0);
  if (root.has("decode")) profile.decode = decode_throughputs(root.at("decode"));
  return profile;
}

HardwareProfile read_hardware_profile(const std::string& path) {
  return hardware_profile_from_json(common::read_json_file(path), path);
}

DecodeThroughputs decode_throughputs_from_json(const nlohmann::json& json, const std::string& where,
                                               const std::string& path) {
  return decode_throughputs(JsonNode(json, where, path));
}

nlohmann::json to_json(const DecodeThroughputs& decode) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& t : decode.throughputs)
    list.push_back({{"codec", t.codec}, {"level", t.level}, {"fp16_bytes_per_s", t.fp16_bytes_per_s}});
  return {{"source", decode.source}, {"device", decode.device}, {"throughputs", list}};
}

}  // namespace kvstream::sim
