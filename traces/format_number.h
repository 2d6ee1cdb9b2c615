// Shortest decimal text of a double that reads back as the same double ("0.1", "1e+09", "inf"),
// used to name derived and generated traces.
#pragma once
#include <charconv>
#include <string>

namespace kvstream::traces {

inline std::string format_number(double value) {
  char text[32];
  const auto result = std::to_chars(text, text + sizeof text, value);
  return std::string(text, result.ptr);
}

}  // namespace kvstream::traces
