#include "common/atomic_file.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <regex>
#include <stdexcept>

namespace kvstream::common {

namespace {

// Why the last file operation failed, from errno ("No space left on device", "File too large").
std::string reason() { return errno != 0 ? std::string(": ") + std::strerror(errno) : std::string(); }

// PATH.tmp.<host>.<pid>.<n>: a name no other writer uses, so that writers of one path (threads, or
// Slurm tasks on several hosts of a shared file system) never write into each other's temporary file;
// the last rename wins, and every reader sees one whole file.
std::filesystem::path temporary_name(const std::filesystem::path& path) {
  static std::atomic<unsigned> count{0};
  char host[64] = "host";
  ::gethostname(host, sizeof host - 1);
  host[sizeof host - 1] = 0;
  return path.string() + ".tmp." + host + "." + std::to_string(::getpid()) + "." + std::to_string(count++);
}

// Whether `name` is one temporary_name gives: <file>.tmp.<host>.<pid>.<n>.
bool is_temporary_name(const std::string& name) {
  static const std::regex pattern(R"(.+\.tmp\.[^/]+\.[0-9]+\.[0-9]+)");
  return std::regex_match(name, pattern);
}

}  // namespace

size_t remove_stale_temporaries(const std::filesystem::path& dir) {
  size_t removed = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    std::error_code file_ec;
    if (entry.is_regular_file(file_ec) && is_temporary_name(entry.path().filename().string()) &&
        std::filesystem::remove(entry.path(), file_ec))
      ++removed;
  }
  return removed;
}

void write_file_atomically(const std::filesystem::path& path, const std::function<void(std::ostream&)>& write) {
  const std::filesystem::path tmp = temporary_name(path);
  try {
    {
      errno = 0;
      std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
      if (!out) throw std::runtime_error("cannot create " + tmp.string() + reason());
      write(out);
      out.flush();
      if (!out) throw std::runtime_error("cannot write " + path.string() + " (through " + tmp.string() + ")" + reason());
      out.close();
      if (!out) throw std::runtime_error("cannot write " + path.string() + " (closing " + tmp.string() + ")" + reason());
    }
    std::error_code error;
    std::filesystem::rename(tmp, path, error);
    if (error)
      throw std::runtime_error("cannot write " + path.string() + ": renaming " + tmp.string() + " over it failed: " +
                               error.message());
  } catch (...) {
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
    throw;
  }
}

}  // namespace kvstream::common
