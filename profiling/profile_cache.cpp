#include "profiling/profile_cache.h"

#include <cstdlib>
#include <stdexcept>

#include "common/atomic_file.h"
#include "common/content_hash.h"
#include "common/data_resolver.h"
#include "common/file_text.h"
#include "common/json_reader.h"

namespace kvstream::profiling {

std::filesystem::path ProfileCache::default_dir() {
  if (const char* dir = std::getenv("KVSTREAM_PROFILE_CACHE"); dir && *dir) return dir;
  return common::data_cache_dir().parent_path() / "profiles";
}

std::string ProfileCache::key(const nlohmann::json& inputs) { return common::content_hash(inputs.dump()); }

std::optional<nlohmann::json> ProfileCache::load(const nlohmann::json& inputs) const {
  const auto file = path(key(inputs));
  const auto text = common::read_file_if_open(file);
  if (!text) return std::nullopt;
  nlohmann::json entry;
  try {
    entry = common::parse_json(*text, file.string());
  } catch (const common::JsonError& e) {
    throw std::runtime_error(std::string(e.what()) + " (a corrupt profile cache entry: delete it to re-profile)");
  }
  const auto refuse = [&](const std::string& why) {
    throw std::runtime_error(file.string() + ": corrupt profile cache entry: " + why + " (delete it to re-profile)");
  };
  if (!entry.is_object()) refuse("not a JSON object");
  if (entry.value("format", nlohmann::json()) != kFormat) refuse("\"format\" is not \"" + std::string(kFormat) + "\"");
  if (entry.value("version", nlohmann::json()) != kVersion)
    refuse("\"version\" is not " + std::to_string(kVersion) + ", the version this build reads");
  if (!entry.contains("inputs") || !entry.contains("result")) refuse("no \"inputs\" or no \"result\"");
  if (entry.at("inputs") != inputs) return std::nullopt;  // a hash collision: measure again
  return entry.at("result");
}

void ProfileCache::store(const nlohmann::json& inputs, const nlohmann::json& result) const {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) throw std::runtime_error(dir_.string() + ": cannot create the profile cache: " + ec.message());
  const nlohmann::json entry = {{"format", kFormat}, {"version", kVersion}, {"inputs", inputs}, {"result", result}};
  common::write_file_atomically(path(key(inputs)), [&](std::ostream& out) { out << entry.dump(1) << "\n"; });
}

}  // namespace kvstream::profiling
