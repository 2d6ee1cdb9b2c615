// Finds data files that the project uses but does not ship (docs/ARCHITECTURE.md §6).
// Search order: $KVSTREAM_DATA, then ../shared/data beside the repository, then the user cache
// ($XDG_CACHE_HOME or ~/.cache, + /kvstream/data) that scripts/fetch-data.sh fills.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace kvstream::common {

// A data file was in none of the search roots; the message names it, every place searched and
// how to fetch it (scripts/fetch-data.sh, for a file scripts/data_files.sha256 lists), or that no
// data source lists it.
class DataNotFound : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The user cache that scripts/fetch-data.sh fills: $XDG_CACHE_HOME/kvstream/data, else
// $HOME/.cache/kvstream/data.
std::filesystem::path data_cache_dir();

// The roots searched, in order; $KVSTREAM_DATA appears only when set and non-empty.
std::vector<std::filesystem::path> data_search_roots();

// `relative` under the first root that has it, e.g. "models/stories260K/stories260K.bin".
std::filesystem::path resolve_data(const std::string& relative);
// The same for a folder, e.g. "traces/mahimahi".
std::filesystem::path resolve_data_dir(const std::string& relative);

// A command-line file argument: `arg` itself when that file exists (absolute or relative to the
// working directory), else `arg` as a data-relative path.
std::filesystem::path resolve_input(const std::string& arg);

}  // namespace kvstream::common
