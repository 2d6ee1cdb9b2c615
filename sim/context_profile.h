// The context profile: everything the simulator needs to know about one context, measured offline
// (docs/ARCHITECTURE.md §1 step 1): per chunk, the bytes, encode/decode times and quality of every level
// of the ladder, the bytes of the chunk as text, and optionally a measured recompute time.
//
// Quality is a number in [0, 1] per (chunk, level) where 1 means "the same as the original KV"
// (e.g. top-1 agreement of next-token predictions, or task accuracy relative to the original);
// a text chunk is recomputed exactly, so its quality is 1. The JSON format is documented in
// sim/README.md; readers report errors with the JSON path.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "sim/level_name.h"

namespace kvstream::sim {

struct LevelInfo {
  std::string name;   // unique within the profile, e.g. "cachegen:2", "quant:bits=8" (sim/level_name.h)
  // The codec spec the level belongs to, e.g. "cachegen", "cachegen:delta", "quant:bits=8";
  // policies pick ladders by it.
  std::string codec;
};

struct LevelCost {
  double bytes = 0;
  double encode_s = 0;
  double decode_s = 0;
  double quality = 1;  // in [0, 1]
};

struct ChunkProfile {
  int64_t start_token = 0;  // the chunk covers [start_token, start_token + tokens)
  int64_t tokens = 0;
  double text_bytes = 0;               // the chunk's text on the wire
  std::optional<double> recompute_s;   // measured prefill of the chunk after its prefix, if known
  std::vector<LevelCost> levels;       // aligned with ContextProfile::levels
};

struct ContextProfile {
  std::string name;
  std::string model;
  int64_t chunk_tokens = 0;
  std::vector<LevelInfo> levels;
  std::vector<ChunkProfile> chunks;
  // fp16 KV bytes per token of the model the costs are for (optional): what a decoder rated in fp16
  // bytes/s delivers per token, so decode times can come from a throughput (SimConfig::decode_time).
  std::optional<double> fp16_bytes_per_token;

  int64_t context_tokens() const;
  // Index of the level called `name`; throws std::invalid_argument listing the names otherwise.
  int level_index(const std::string& name) const;
};

// fp16 KV bytes per token above this are refused where they are read (profiles, configs): Llama-2-70B
// has 327,680; 1e308 used to overflow the reports to infinity, written as null.
inline constexpr double kMaxFp16BytesPerToken = 1e9;
// Bounds on a chunk's values, far beyond any real context, so that every simulated time is finite.
inline constexpr int64_t kMaxChunkTokens = 1'000'000'000;
inline constexpr double kMaxChunkBytes = 1e15;    // bytes and text_bytes
inline constexpr double kMaxChunkSeconds = 1e6;   // encode_s, decode_s, recompute_s

inline constexpr const char* kContextProfileFormat = "kvstream-context-profile";
inline constexpr int64_t kContextProfileVersion = 1;

// Throws std::runtime_error "<where>: <json path>: <what was wrong>" on any schema violation: a
// "format" or "version" other than the above (both optional), missing or mistyped keys, sizes or
// times negative or beyond the bounds above, quality outside [0, 1], chunks that are not contiguous
// from token 0, or a chunk whose level list does not match the profile's levels.
ContextProfile context_profile_from_json(const nlohmann::json& json, const std::string& where = "profile");
ContextProfile read_context_profile(const std::string& path);
nlohmann::json to_json(const ContextProfile& profile);

// A synthetic profile for tests, benchmarks and examples that need no model run: `n_chunks` chunks
// of `chunk_tokens`, the same costs in every chunk. Defaults: a Mistral-7B-shaped context (128 KiB
// of fp16 KV per token) at the ratios the CacheGen codec measured on the real KV fixture (levels
// 1-3: 4.65x, 3.78x, 3.02x smaller than fp16, bitstream format 2; quant:bits=8 1.886x), quality =
// the top-1 agreement measured per level on stories260K (tests/golden/quality_stories260K.json), and
// an ASSUMED decoder at 2 GB/s of compressed input. Levels are named as the profiler names them
// (sim/level_name.h). Not a measurement of any one context: real profiles come from `kvstream run`
// (experiments).
struct SyntheticProfileSpec {
  int n_chunks = 10;
  int64_t chunk_tokens = 1500;
  std::vector<LevelName> levels = {{"cachegen", 1, true}, {"cachegen", 2, true}, {"cachegen", 3, true},
                                   {"quant:bits=8", 1, false}};
  std::vector<double> bytes_per_token = {131072 / 4.65, 131072 / 3.78, 131072 / 3.02, 131072 / 1.886};
  std::vector<double> quality = {0.750, 0.867, 0.948, 0.998};
  double decode_bytes_per_s = 2e9;
  double text_bytes_per_token = 4;
  double fp16_bytes_per_token = 131072;  // Mistral-7B: 2 (K, V) x 32 layers x 8 KV heads x 128 x 2 B
};
ContextProfile synthetic_profile(const SyntheticProfileSpec& spec);

}  // namespace kvstream::sim
