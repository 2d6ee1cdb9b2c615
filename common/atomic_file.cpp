#include "common/atomic_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace kvstream::common {

namespace {

// Why the last file operation failed, from errno ("No space left on device", "File too large").
std::string reason() { return errno != 0 ? std::string(": ") + std::strerror(errno) : std::string(); }

}  // namespace

void write_file_atomically(const std::filesystem::path& path, const std::function<void(std::ostream&)>& write) {
  const std::filesystem::path tmp = path.string() + ".tmp";
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
