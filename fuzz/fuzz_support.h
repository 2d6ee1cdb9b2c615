// What every libFuzzer target of fuzz/ shares (docs/FUZZING.md): the one rule that separates an
// expected rejection from a finding, and the scratch file through which path-taking parsers read
// an input.
//
// A finding is anything but a clean return or a documented rejection: a crash, a sanitizer report,
// a hang (-timeout), running out of memory (-rss_limit_mb), or an exception that is not the
// std::runtime_error / std::invalid_argument (or a subclass: BitstreamError, TraceError) with a
// non-empty message that the parsers document. Such an exception is printed with its type and
// message and aborts, so libFuzzer keeps the input.
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

namespace kvstream::fuzz {

// Prints "kvstream fuzz finding: WHAT" and aborts (a broken invariant a target checks itself).
[[noreturn]] void report_finding(const std::string& what);

// Runs `parse`: returns normally when it returns or throws a documented rejection; aborts with a
// message on any other exception (see above).
void expect_clean_rejection(const std::function<void()>& parse);

// This process's scratch file for `target` (kvstream-fuzz-<target>-<pid> in
// std::filesystem::temp_directory_path(): $TMPDIR, else /tmp), overwritten with the input on every
// call and removed when the process exits normally. One per process, so parallel fuzzers never
// share one. scripts/fuzz.sh sets TMPDIR to /dev/shm: rewriting a file on a disk file system can
// cost more than the parse (on the development VM's ext4, mounted with discard, 40x).
const std::filesystem::path& write_input_file(const std::string& target, const uint8_t* data, size_t size);

}  // namespace kvstream::fuzz
