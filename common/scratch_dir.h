// A private scratch folder in the system's temporary directory, removed with everything in it when
// the object goes: for files a command needs only while it runs (candidate ladders of
// calibrate-ladder, the calibration `rd --calibration-text` fits).
#pragma once
#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace kvstream::common {

class ScratchDir {
 public:
  explicit ScratchDir(const std::string& purpose)
      : path_(std::filesystem::temp_directory_path() / ("kvstream-" + purpose + "-" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  std::filesystem::path file(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

}  // namespace kvstream::common
