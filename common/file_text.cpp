#include "common/file_text.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace kvstream::common {

std::string read_file_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) throw std::runtime_error("error reading " + path.string());
  return text.str();
}

}  // namespace kvstream::common
