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

// Removes the temporary files that writers killed mid-write (SIGKILL, a lost node) left directly in
// `dir` (PATH.tmp.<host>.<pid>.<n>, not in its subfolders), and returns how many. Only for a
// directory no one else writes into at the time: a result directory under its DirectoryLock.
size_t remove_stale_temporaries(const std::filesystem::path& dir);

}  // namespace kvstream::common
