// The first line of an error message, for one-line notes in a log (the resolver's not-found
// messages go on to list every place searched): without the colon that introduced the rest.
#pragma once
#include <algorithm>
#include <exception>
#include <string>

namespace kvstream::common {

inline std::string first_line(const std::exception& e) {
  std::string line = e.what();
  line.resize(std::min(line.size(), line.find('\n')));
  while (!line.empty() && (line.back() == ':' || line.back() == ' ')) line.pop_back();
  return line;
}

}  // namespace kvstream::common
