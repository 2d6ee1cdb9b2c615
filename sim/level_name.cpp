#include "sim/level_name.h"

namespace kvstream::sim {

std::string LevelName::format() const { return ladder ? codec + ":" + std::to_string(level) : codec; }

std::optional<LevelName> LevelName::parse(const std::string& name, const std::string& codec) {
  if (name == codec) return LevelName{codec, 1, false};
  if (name.size() <= codec.size() + 1 || name.compare(0, codec.size() + 1, codec + ":") != 0) return std::nullopt;
  const std::string digits = name.substr(codec.size() + 1);
  if (digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  return LevelName{codec, std::stoi(digits), true};
}

}  // namespace kvstream::sim
