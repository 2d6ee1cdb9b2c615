// The cache of measured context profiles, the cached stage of `kvstream run`: profiling a context
// (prefill, encode/decode of every chunk at every level, quality) is done once and reused by every
// trace, policy and SLO, and by later runs. An entry is named by the hash of everything
// the measurement depends on (model, the context's tokens, chunking, codecs, levels, profiler and
// bitstream versions) and holds those inputs beside the result, so a hash collision is detected, not used.
// Entries are written atomically (a reader sees a whole entry or none); an entry that is not valid
// JSON, or not of this format and version, is an error naming its path, never a silent miss.
#pragma once
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace kvstream::profiling {

class ProfileCache {
 public:
  // Every entry says what it is; an entry of another format or version is refused, not reused.
  static constexpr const char* kFormat = "kvstream-profile-cache";
  static constexpr int kVersion = 1;

  // Default directory: $KVSTREAM_PROFILE_CACHE, else the user cache's kvstream/profiles
  // ($XDG_CACHE_HOME or ~/.cache).
  static std::filesystem::path default_dir();

  explicit ProfileCache(std::filesystem::path dir) : dir_(std::move(dir)) {}

  static std::string key(const nlohmann::json& inputs);  // 16 hex digits
  std::filesystem::path path(const std::string& key) const { return dir_ / (key + ".json"); }
  const std::filesystem::path& dir() const { return dir_; }

  // The cached result for `inputs`, if any.
  std::optional<nlohmann::json> load(const nlohmann::json& inputs) const;
  void store(const nlohmann::json& inputs, const nlohmann::json& result) const;

 private:
  std::filesystem::path dir_;
};

}  // namespace kvstream::profiling
