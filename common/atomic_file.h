// Writes a file so that readers see either the old file or the complete new one: the content goes
// to a temporary file PATH.tmp.<host>.<pid>.<n> of this writer alone, which is renamed over PATH
// only after every byte was written; concurrent writers of one path each rename a whole file. On any
// failure the temporary file is removed and the error names the path.
#pragma once
#include <filesystem>
#include <functional>
#include <ostream>

namespace kvstream::common {

void write_file_atomically(const std::filesystem::path& path, const std::function<void(std::ostream&)>& write);

}  // namespace kvstream::common
