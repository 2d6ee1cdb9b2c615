#include "common/directory_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "common/atomic_file.h"
#include "common/utc_time.h"

namespace kvstream::common {

namespace {

std::string who_holds(int fd) {
  char text[512];
  const ssize_t n = ::pread(fd, text, sizeof text - 1, 0);
  if (n <= 0) return "a process that did not say who it is";
  std::string holder(text, size_t(n));
  while (!holder.empty() && (holder.back() == '\n' || holder.back() == ' ')) holder.pop_back();
  return holder;
}

}  // namespace

DirectoryLock::DirectoryLock(const std::filesystem::path& dir, const std::string& holder) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw std::runtime_error(dir.string() + ": cannot create the directory: " + ec.message());
  const std::filesystem::path path = dir / ".lock";
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw std::runtime_error(path.string() + ": cannot open the lock file: " + std::strerror(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    const std::string held_by = error == EWOULDBLOCK ? who_holds(fd_) : "";
    ::close(fd_);
    fd_ = -1;
    if (error == EWOULDBLOCK)
      throw std::runtime_error(dir.string() + " is being written by " + held_by +
                               ": wait for it to end, or choose another directory");
    throw std::runtime_error(path.string() + ": flock: " + std::strerror(error));
  }
  char host[256] = "unknown host";
  ::gethostname(host, sizeof host - 1);
  const std::string text = holder + " (pid " + std::to_string(::getpid()) + " on " + host + ", since " + utc_now() + ")\n";
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, text.data(), text.size(), 0) != ssize_t(text.size())) {
    // The lock holds without its description; the next writer's message only says less.
  }
  remove_stale_temporaries(dir);
}

DirectoryLock::~DirectoryLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the last descriptor releases the flock
}

}  // namespace kvstream::common
