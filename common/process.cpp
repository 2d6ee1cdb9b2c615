#include "common/process.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

extern char** environ;

namespace kvstream::common {

namespace {

// Closes a descriptor once, however the function leaves.
struct Fd {
  int fd = -1;
  ~Fd() { close(); }
  void close() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

struct SpawnActions {
  posix_spawn_file_actions_t actions;
  SpawnActions() { posix_spawn_file_actions_init(&actions); }
  ~SpawnActions() { posix_spawn_file_actions_destroy(&actions); }
};

}  // namespace

ProcessResult run_process(const std::vector<std::string>& argv, Stderr stderr_output) {
  if (argv.empty() || argv[0].empty()) throw std::invalid_argument("run_process: no program to run");
  for (const auto& arg : argv)
    if (arg.find('\0') != std::string::npos)
      throw std::invalid_argument("run_process: an argument of " + argv[0] + " holds a NUL byte");
  std::vector<char*> args;
  for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);

  int ends[2];
  if (::pipe2(ends, O_CLOEXEC) != 0) throw std::runtime_error("cannot run " + argv[0] + ": pipe: " + std::strerror(errno));
  Fd read_end{ends[0]}, write_end{ends[1]};
  SpawnActions spawn;
  posix_spawn_file_actions_addopen(&spawn.actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&spawn.actions, write_end.fd, STDOUT_FILENO);  // dup2 clears O_CLOEXEC
  if (stderr_output == Stderr::kCaptured) posix_spawn_file_actions_adddup2(&spawn.actions, write_end.fd, STDERR_FILENO);
  else posix_spawn_file_actions_addopen(&spawn.actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  if (const int error = ::posix_spawnp(&pid, args[0], &spawn.actions, nullptr, args.data(), environ); error != 0)
    throw std::runtime_error("cannot run " + argv[0] + ": " + std::strerror(error));
  write_end.close();  // the child holds its copy: the read below ends when the child's closes

  ProcessResult result;
  char buffer[4096];
  while (true) {
    const ssize_t n = ::read(read_end.fd, buffer, sizeof buffer);
    if (n > 0) result.output.append(buffer, size_t(n));
    else if (n == 0 || errno != EINTR) break;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw std::runtime_error("cannot wait for " + argv[0] + ": " + std::strerror(errno));
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

}  // namespace kvstream::common
