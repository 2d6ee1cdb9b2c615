// A whole file as a string (text or bytes).
#pragma once
#include <filesystem>
#include <string>

namespace kvstream::common {

// Throws std::runtime_error naming the path when it cannot be opened or read.
std::string read_file_text(const std::filesystem::path& path);

}  // namespace kvstream::common
