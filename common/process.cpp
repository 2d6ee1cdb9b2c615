#include "common/process.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <thread>

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

// argv as posix_spawnp takes it (pointers into argv, then a null); throws std::invalid_argument for
// an empty argv or an argument holding a NUL byte.
std::vector<char*> spawn_arguments(const std::vector<std::string>& argv) {
  if (argv.empty() || argv[0].empty()) throw std::invalid_argument("run_process: no program to run");
  for (const auto& arg : argv)
    if (arg.find('\0') != std::string::npos)
      throw std::invalid_argument("run_process: an argument of " + argv[0] + " holds a NUL byte");
  std::vector<char*> args;
  for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  return args;
}

std::string status_text(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return "was killed by signal " + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) + ")";
  return "ended";
}

}  // namespace

ProcessResult run_process(const std::vector<std::string>& argv, Stderr stderr_output) {
  std::vector<char*> args = spawn_arguments(argv);

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

LineProcess::LineProcess(const std::vector<std::string>& argv) {
  std::vector<char*> args = spawn_arguments(argv);
  for (const auto& arg : argv) name_ += (name_.empty() ? "" : " ") + arg;
  int ends[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) != 0)
    throw std::runtime_error("cannot run " + name_ + ": socketpair: " + std::strerror(errno));
  Fd child_end{ends[1]};
  fd_ = ends[0];
  SpawnActions spawn;
  posix_spawn_file_actions_adddup2(&spawn.actions, child_end.fd, STDIN_FILENO);  // dup2 clears O_CLOEXEC
  posix_spawn_file_actions_adddup2(&spawn.actions, child_end.fd, STDOUT_FILENO);
  if (const int error = ::posix_spawnp(&pid_, args[0], &spawn.actions, nullptr, args.data(), environ); error != 0) {
    ::close(fd_);
    throw std::runtime_error("cannot run " + name_ + ": " + std::strerror(error));
  }
}

LineProcess::~LineProcess() {
  ::close(fd_);  // the program reads the end of its input
  if (pid_ < 0) return;  // reaped already
  int status = 0;
  for (int waited_ms = 0; ::waitpid(pid_, &status, WNOHANG) == 0; ++waited_ms) {
    if (waited_ms == 1000) {
      ::kill(pid_, SIGKILL);
      while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {}
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

void LineProcess::fail(const std::string& what) { throw std::runtime_error(name_ + ": " + what); }

std::string LineProcess::how_it_ended() {
  if (pid_ < 0) return ended_;
  int status = 0;
  for (int waited_ms = 0; waited_ms < 1000; ++waited_ms) {  // it closed its output: it is ending
    const pid_t ended = ::waitpid(pid_, &status, WNOHANG);
    if (ended == pid_) {
      pid_ = -1;  // reaped: the destructor has nothing to wait for
      return ended_ = status_text(status);
    }
    if (ended < 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return "closed its output";
}

void LineProcess::send(const std::string& line) {
  const std::string framed = line + "\n";
  for (size_t sent = 0; sent < framed.size();) {
    // MSG_NOSIGNAL: a program that has gone is an error here, not a SIGPIPE that ends this process.
    const ssize_t n = ::send(fd_, framed.data() + sent, framed.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(errno == EPIPE || errno == ECONNRESET ? how_it_ended() + " (writing to it)" : std::string("writing to it: ") + std::strerror(errno));
    sent += size_t(n);
  }
}

std::string LineProcess::receive(double timeout_s) {
  const auto now = std::chrono::steady_clock::now();
  const auto deadline = now + std::chrono::duration<double>(timeout_s);
  const auto spin_end = now + kSpin;
  while (true) {
    if (const size_t newline = received_.find('\n'); newline != std::string::npos) {
      std::string line = received_.substr(0, newline);
      received_.erase(0, newline + 1);
      return line;
    }
    if (received_.size() > kMaxLineBytes) fail("a line longer than " + std::to_string(kMaxLineBytes) + " bytes");
    char buffer[65536];
    ssize_t n = ::recv(fd_, buffer, sizeof buffer, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (std::chrono::steady_clock::now() < spin_end) {
        sched_yield();  // a program on this core runs now
        continue;
      }
      const double left_ms = std::chrono::duration<double, std::milli>(deadline - std::chrono::steady_clock::now()).count();
      pollfd ready{fd_, POLLIN, 0};
      const int polled = left_ms > 0 ? ::poll(&ready, 1, int(std::ceil(left_ms))) : 0;
      if (polled < 0 && errno == EINTR) continue;
      if (polled < 0) fail(std::string("waiting for it: ") + std::strerror(errno));
      if (polled == 0) {
        std::ostringstream text;
        text << "no answer within " << timeout_s << " s";
        fail(text.str());
      }
      n = ::read(fd_, buffer, sizeof buffer);
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(std::string("reading from it: ") + std::strerror(errno));
    if (n == 0) fail(how_it_ended() + (received_.empty() ? " without answering" : " in the middle of a line"));
    received_.append(buffer, size_t(n));
  }
}

}  // namespace kvstream::common
