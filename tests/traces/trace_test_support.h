// Helpers of the traces suite: the real trace folder (through the data resolver) and a fresh
// temporary directory per test for small hand-written trace files.
#pragma once
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "common/data_resolver.h"
#include "tests/test_support.h"

namespace kvstream::traces::test {

// shared/data/traces (docs/DATA.md §1), or nullopt when the data is not installed.
inline std::optional<std::filesystem::path> traces_dir() {
  try {
    return common::resolve_data("traces/cachegen/bw.jsonl").parent_path().parent_path();
  } catch (const common::DataNotFound&) {
    return std::nullopt;
  }
}

// The shared fresh temporary directory (tests/test_support.h), with a writer of small trace files.
class TempDirTest : public test_support::TempDirTest {
 protected:
  // Writes `content` to dir_/name and returns its path.
  std::string write(const std::string& name, const std::string& content) const {
    const auto path = dir_ / name;
    std::ofstream(path, std::ios::binary) << content;
    return path.string();
  }
};

}  // namespace kvstream::traces::test
