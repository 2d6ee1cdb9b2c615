// Shared by the test suites: the real KV fixture, golden files, and a test base class with a fresh temporary
// directory per test (removed afterwards).
#pragma once
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "codec/format/crc32c.h"
#include "codec/format/kv_dump.h"
#include "common/data_resolver.h"

namespace kvstream::test_support {

inline constexpr const char* kKvFixture = "kv/stories260K_tinystories_4x512.safetensors";

// stories260K on TinyStories: 4 contexts, L=5, H=4, D=8, T=512, fp16 (docs/DATA.md).
inline const codec::KvFile& kv_fixture() {
  static const codec::KvFile kv = codec::load_kv(common::resolve_data(kKvFixture));
  return kv;
}

// A committed golden file, tests/golden/<name>, parsed.
inline nlohmann::json golden_json(const std::string& name) {
  std::ifstream in(std::filesystem::path(__FILE__).parent_path() / "golden" / name);
  if (!in) throw std::runtime_error("golden file tests/golden/" + name + " is missing");
  return nlohmann::json::parse(in);
}

// Writes the trailing CRC32C of a bitstream or a calibration file again after an edit, so that the
// checks behind it see the edit.
inline void repair_crc(std::vector<uint8_t>& bytes) {
  const size_t body = bytes.size() - 4;  // the CRC32C, codec/FORMAT.md §1
  const uint32_t crc = codec::crc32c(std::span(bytes).first(body));
  for (int b = 0; b < 4; ++b) bytes[body + size_t(b)] = static_cast<uint8_t>(crc >> (8 * b));
}

// Whether a temporary file of write_file_atomically (PATH.tmp.*) is left beside `path`.
inline bool temporary_left(const std::filesystem::path& path) {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(path.parent_path(), ec))
    if (entry.path().filename().string().rfind(path.filename().string() + ".tmp", 0) == 0) return true;
  return false;
}

class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("kvstream_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->test_suite_name() + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::filesystem::path dir_;
};

}  // namespace kvstream::test_support
