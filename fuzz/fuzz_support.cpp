#include "fuzz/fuzz_support.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <typeinfo>

namespace kvstream::fuzz {

namespace {

[[noreturn]] void finding(const char* what, const char* type) {
  report_finding(std::string(what) + " (exception of type " + type + ")");
}

template <class Error>
void require_message(const Error& e) {
  if (e.what() == nullptr || *e.what() == '\0') finding("a rejection without a message", typeid(e).name());
}

// The scratch file, removed at normal exit (libFuzzer exits normally after -runs/-max_total_time).
struct ScratchFile {
  std::filesystem::path path;
  ~ScratchFile() {
    std::error_code ignored;
    if (!path.empty()) std::filesystem::remove(path, ignored);
  }
};

}  // namespace

void report_finding(const std::string& what) {
  std::fprintf(stderr, "kvstream fuzz finding: %s\n", what.c_str());
  std::abort();
}

void expect_clean_rejection(const std::function<void()>& parse) {
  try {
    parse();
  } catch (const std::invalid_argument& e) {
    require_message(e);
  } catch (const std::runtime_error& e) {
    require_message(e);
  } catch (const std::exception& e) {
    finding(e.what(), typeid(e).name());
  }
}

const std::filesystem::path& write_input_file(const std::string& target, const uint8_t* data, size_t size) {
  static ScratchFile file;
  if (file.path.empty())
    file.path = std::filesystem::temp_directory_path() /
                ("kvstream-fuzz-" + target + "-" + std::to_string(::getpid()));
  std::ofstream out(file.path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), std::streamsize(size));
  out.close();
  if (!out) throw std::logic_error("cannot write the fuzz input to " + file.path.string());
  return file.path;
}

}  // namespace kvstream::fuzz
