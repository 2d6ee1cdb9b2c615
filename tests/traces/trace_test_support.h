// Helpers of the traces suite: the real trace folder (through the data resolver) and a fresh
// temporary directory per test for small hand-written trace files.
#pragma once
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "common/data_resolver.h"

namespace kvstream::traces::test {

// shared/data/traces (docs/DATA.md §1), or nullopt when the data is not installed.
inline std::optional<std::filesystem::path> traces_dir() {
  try {
    return common::resolve_data("traces/cachegen/bw.jsonl").parent_path().parent_path();
  } catch (const common::DataNotFound&) {
    return std::nullopt;
  }
}

class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           ("kvstream_traces_" + std::to_string(::getpid()) + "_" + info->test_suite_name() + "_" + info->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Writes `content` to dir_/name and returns its path.
  std::string write(const std::string& name, const std::string& content) const {
    const auto path = dir_ / name;
    std::ofstream(path, std::ios::binary) << content;
    return path.string();
  }

  std::filesystem::path dir_;
};

}  // namespace kvstream::traces::test
