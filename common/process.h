// Running another program without a shell (docs/THREAT_MODEL.md): the program and every argument go
// to posix_spawnp(3) as one argument vector, so no string from a file, a flag or the environment is
// ever parsed by a shell (a job id of "1;touch PWNED" is one argument that squeue refuses, not two
// commands). Either once (run_process: standard input /dev/null, what it prints captured) or as a
// partner that answers lines (LineProcess).
#pragma once
#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace kvstream::common {

struct ProcessResult {
  int exit_code = -1;  // the program's exit status; -1 when a signal ended it
  std::string output;  // what it printed (stdout, and stderr unless dropped)
};

enum class Stderr { kCaptured, kDropped };

// Runs argv[0] (looked up on PATH unless it holds a '/') with arguments argv[1..] and waits for it.
// Throws std::invalid_argument for an empty argv or an argument holding a NUL byte, and
// std::runtime_error naming the program when it cannot be started (not found, not executable, no
// process to be had).
ProcessResult run_process(const std::vector<std::string>& argv, Stderr stderr_output = Stderr::kCaptured);

// A program that runs beside this one and answers lines (e.g. an external policy, sim/policy.h): its
// standard input and output are one socket to this process, its standard error is this process's.
// Every error is a std::runtime_error that names the program ("python3 policy.py") and says what
// happened: it could not start, it exited (with its status or signal), it said nothing within the
// timeout, or its line outgrew kMaxLineBytes. After an error the program is of no further use.
class LineProcess {
 public:
  static constexpr size_t kMaxLineBytes = 16 << 20;
  // receive() looks for the answer this long, yielding the core between looks, before it sleeps
  // until one comes: the wake-up of a sleeping thread across cores took ~90 us on the 2-core VM
  // (docs/POLICIES.md "Examples and cost").
  static constexpr std::chrono::microseconds kSpin{200};

  // Starts argv as run_process does (same checks, same errors).
  explicit LineProcess(const std::vector<std::string>& argv);
  // Closes the program's input and waits up to 1 s for it to end, then kills it.
  ~LineProcess();
  LineProcess(const LineProcess&) = delete;
  LineProcess& operator=(const LineProcess&) = delete;

  // Writes `line` and a newline (`line` must hold none).
  void send(const std::string& line);
  // The program's next line, without its newline; waits at most timeout_s (kSpin of it awake).
  std::string receive(double timeout_s);
  const std::string& name() const { return name_; }  // the argument vector, joined by spaces

 private:
  [[noreturn]] void fail(const std::string& what);
  std::string how_it_ended();  // after end of input: "exited with status 1", ...

  std::string name_;
  pid_t pid_ = -1;      // -1 once reaped
  std::string ended_;  // how it ended, once reaped
  int fd_ = -1;
  std::string received_;  // read, not yet returned
};

}  // namespace kvstream::common
