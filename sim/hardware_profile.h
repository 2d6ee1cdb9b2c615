// The hardware profile the simulator reads (written by `kvstream profile-prefill`, docs/PROFILES.md
// timing profiles"): the prefill cost model of a (device, model) pair and where it came from, and
// optionally the decoder throughputs measured on a device (`kvstream profile-decode`, or
// scripts/gpu-check.sh on a GPU).
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

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

// How fast one decoder turns a bitstream of (codec, level) back into KV, rated by the fp16 KV it
// delivers: decoding a chunk of T tokens takes T · fp16 bytes per token / fp16_bytes_per_s.
struct DecodeThroughput {
  std::string codec;  // the codec spec as codec-bench prints it, e.g. "cachegen:entropy=rans", "quant:bits=8"
  int level = 1;      // as codec-bench prints it: the ladder level, 1 for a single-level codec
  double fp16_bytes_per_s = 0;  // > 0
};

// The "decode" section: every measured (codec, level) of one device, each pair at most once.
struct DecodeThroughputs {
  std::string source;  // how and where they were measured, e.g. "measured: kvstream profile-decode on ..."
  std::string device;  // e.g. "cpu: Intel Xeon ...", "cuda: NVIDIA H200"
  std::vector<DecodeThroughput> throughputs;

  // The entry of (codec, level), or nullptr when it was not measured.
  const DecodeThroughput* find(const std::string& codec, int level) const;
};

struct HardwareProfile {
  std::string device;  // "cpu", "a40", ...
  std::string kind;    // "measured" or "analytic"
  std::string model;   // the model or architecture the costs are for
  PrefillCostModel prefill;
  std::optional<DecodeThroughputs> decode;
};

// Throws JsonError "<where>: <json path>: ..." when the profile lacks prefill_cost_model.{a,b,c}
// or a coefficient is negative, or when its optional "decode" section is malformed (see
// decode_throughputs_from_json).
HardwareProfile hardware_profile_from_json(const nlohmann::json& json, const std::string& where = "hardware profile");
HardwareProfile read_hardware_profile(const std::string& path);

// A "decode" section at `path` of `json` (e.g. "$.decode"): {"source", "device", "throughputs":
// [{"codec", "level", "fp16_bytes_per_s"}, ...]}. Throws JsonError naming the JSON path for unknown
// keys, an empty source, device or codec, no throughputs, a level < 1, a throughput <= 0, and a
// (codec, level) given twice.
DecodeThroughputs decode_throughputs_from_json(const nlohmann::json& json, const std::string& where,
                                               const std::string& path = "$");
nlohmann::json to_json(const DecodeThroughputs& decode);

}  // namespace kvstream::sim
