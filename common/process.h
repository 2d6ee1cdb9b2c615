// Running another program without a shell (docs/THREAT_MODEL.md): the program and every argument go
// to posix_spawnp(3) as one argument vector, so no string from a file, a flag or the environment is
// ever parsed by a shell (a job id of "1;touch PWNED" is one argument that squeue refuses, not two
// commands). Standard input is /dev/null; what the program prints is captured.
#pragma once
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

}  // namespace kvstream::common
