#include "common/atomic_file.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
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

}  // namespace

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
