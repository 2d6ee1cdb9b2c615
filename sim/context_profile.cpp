#include "sim/context_profile.h"

#include <set>
#include <stdexcept>

#include "common/json_reader.h"

namespace kvstream::sim {

using common::JsonNode;

int64_t ContextProfile::context_tokens() const {
  return chunks.empty() ? 0 : chunks.back().start_token + chunks.back().tokens;
}

int ContextProfile::level_index(const std::string& level_name) const {
  std::string known;
  for (size_t i = 0; i < levels.size(); ++i) {
    if (levels[i].name == level_name) return static_cast<int>(i);
    known += (i ? ", " : "") + levels[i].name;
  }
  throw std::invalid_argument("profile \"" + name + "\" has no level \"" + level_name + "\" (levels: " + known + ")");
}

ContextProfile context_profile_from_json(const nlohmann::json& json, const std::string& where) {
  const JsonNode root(json, where);
  // Optional (hand-written profiles may leave them out), but when present they must be these.
  if (root.has("format") && root.at("format").string() != kContextProfileFormat)
    root.at("format").fail("expected \"" + std::string(kContextProfileFormat) + "\", got \"" +
                           root.at("format").string() + "\"");
  if (root.has("version") && root.at("version").integer_at_least(1) != kContextProfileVersion)
    root.at("version").fail("this kvstream reads context profiles of version " +
                            std::to_string(kContextProfileVersion) + ", got " +
                            std::to_string(root.at("version").integer_at_least(1)));
  ContextProfile profile;
  profile.name = root.has("name") ? root.at("name").string() : "";
  profile.model = root.has("model") ? root.at("model").string() : "";
  profile.chunk_tokens = root.at("chunk_tokens").integer_at_least(1);
  if (root.has("fp16_bytes_per_token"))
    profile.fp16_bytes_per_token = root.at("fp16_bytes_per_token").number_in(1, kMaxFp16BytesPerToken);

  const JsonNode levels = root.at("levels");
  if (levels.size() == 0) levels.fail("expected at least one level");
  std::set<std::string> names;
  for (size_t i = 0; i < levels.size(); ++i) {
    const JsonNode level = levels.at(i);
    LevelInfo info{level.at("name").string(), level.at("codec").string()};
    if (info.name.empty() || !names.insert(info.name).second) level.at("name").fail("expected a unique, non-empty name");
    profile.levels.push_back(std::move(info));
  }

  const JsonNode chunks = root.at("chunks");
  if (chunks.size() == 0) chunks.fail("expected at least one chunk");
  int64_t next_token = 0;
  for (size_t c = 0; c < chunks.size(); ++c) {
    const JsonNode node = chunks.at(c);
    ChunkProfile chunk;
    chunk.start_token = node.at("start_token").integer_at_least(0);
    if (chunk.start_token != next_token)
      node.at("start_token").fail("expected " + std::to_string(next_token) + " (chunks are contiguous from token 0)");
    chunk.tokens = node.at("tokens").integer_at_least(1);
    if (chunk.tokens > kMaxChunkTokens) node.at("tokens").fail("expected at most " + std::to_string(kMaxChunkTokens) + " tokens");
    next_token += chunk.tokens;
    chunk.text_bytes = node.at("text_bytes").number_in(0, kMaxChunkBytes);
    if (node.has("recompute_s")) chunk.recompute_s = node.at("recompute_s").number_in(0, kMaxChunkSeconds);
    const JsonNode costs = node.at("levels");
    if (costs.size() != profile.levels.size())
      costs.fail("expected " + std::to_string(profile.levels.size()) + " entries (one per profile level), got " +
                 std::to_string(costs.size()));
    for (size_t l = 0; l < costs.size(); ++l) {
      const JsonNode cost = costs.at(l);
      chunk.levels.push_back({cost.at("bytes").number_in(0, kMaxChunkBytes), cost.at("encode_s").number_in(0, kMaxChunkSeconds),
                              cost.at("decode_s").number_in(0, kMaxChunkSeconds), cost.at("quality").number_in(0, 1)});
    }
    profile.chunks.push_back(std::move(chunk));
  }
  return profile;
}

ContextProfile read_context_profile(const std::string& path) {
  return context_profile_from_json(common::read_json_file(path), path);
}

nlohmann::json to_json(const ContextProfile& profile) {
  nlohmann::json levels = nlohmann::json::array(), chunks = nlohmann::json::array();
  for (const auto& level : profile.levels) levels.push_back({{"name", level.name}, {"codec", level.codec}});
  for (const auto& chunk : profile.chunks) {
    nlohmann::json costs = nlohmann::json::array();
    for (const auto& cost : chunk.levels)
      costs.push_back(
          {{"bytes", cost.bytes}, {"encode_s", cost.encode_s}, {"decode_s", cost.decode_s}, {"quality", cost.quality}});
    nlohmann::json entry = {
        {"start_token", chunk.start_token}, {"tokens", chunk.tokens}, {"text_bytes", chunk.text_bytes}, {"levels", costs}};
    if (chunk.recompute_s) entry["recompute_s"] = *chunk.recompute_s;
    chunks.push_back(std::move(entry));
  }
  nlohmann::json json = {{"format", kContextProfileFormat},
                         {"version", kContextProfileVersion},
                         {"name", profile.name},
                         {"model", profile.model},
                         {"chunk_tokens", profile.chunk_tokens},
                         {"levels", levels},
                         {"chunks", chunks}};
  if (profile.fp16_bytes_per_token) json["fp16_bytes_per_token"] = *profile.fp16_bytes_per_token;
  return json;
}

ContextProfile synthetic_profile(const SyntheticProfileSpec& spec) {
  if (spec.levels.size() != spec.bytes_per_token.size() || spec.levels.size() != spec.quality.size())
    throw std::invalid_argument("synthetic_profile: levels, bytes_per_token and quality differ in length");
  ContextProfile profile;
  profile.name = "synthetic";
  profile.model = "synthetic";
  profile.chunk_tokens = spec.chunk_tokens;
  profile.fp16_bytes_per_token = spec.fp16_bytes_per_token;
  for (const auto& level : spec.levels) profile.levels.push_back({level.format(), level.codec});
  for (int c = 0; c < spec.n_chunks; ++c) {
    ChunkProfile chunk;
    chunk.start_token = c * spec.chunk_tokens;
    chunk.tokens = spec.chunk_tokens;
    chunk.text_bytes = spec.text_bytes_per_token * static_cast<double>(spec.chunk_tokens);
    for (size_t l = 0; l < spec.levels.size(); ++l) {
      const double bytes = spec.bytes_per_token[l] * static_cast<double>(spec.chunk_tokens);
      chunk.levels.push_back({bytes, bytes / spec.decode_bytes_per_s, bytes / spec.decode_bytes_per_s, spec.quality[l]});
    }
    profile.chunks.push_back(std::move(chunk));
  }
  return profile;
}

}  // namespace kvstream::sim
