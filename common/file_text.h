// A whole file as a string (text or bytes), read in blocks (never a character at a time).
#pragma once
#include <filesystem>
#include <optional>
#include <string>

namespace kvstream::common {

// The file's bytes, or nothing when it cannot be opened, for callers that say so in their own words.
// Throws std::runtime_error naming the path when reading fails after the file was opened.
std::optional<std::string> read_file_if_open(const std::filesystem::path& path);

// Throws std::runtime_error naming the path when it cannot be opened or read.
std::string read_file_text(const std::filesystem::path& path);

}  // namespace kvstream::common
