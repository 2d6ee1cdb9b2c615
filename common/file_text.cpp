#include "common/file_text.h"

#include <fstream>
#include <stdexcept>

namespace kvstream::common {

std::optional<std::string> read_file_if_open(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string text;
  char block[1 << 16];
  while (in.read(block, sizeof block) || in.gcount() > 0) text.append(block, size_t(in.gcount()));
  if (in.bad()) throw std::runtime_error("error reading " + path.string());
  return text;
}

std::string read_file_text(const std::filesystem::path& path) {
  auto text = read_file_if_open(path);
  if (!text) throw std::runtime_error("cannot read " + path.string());
  return std::move(*text);
}

}  // namespace kvstream::common
