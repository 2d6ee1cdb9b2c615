// Shipped hardware profiles by name: a measured profile in measured/ replaces the analytic one of
// the same name and says which; a path is taken as given; an unknown name lists every name once.
#include <gtest/gtest.h>

#include <fstream>

#include "profiling/shipped_profiles.h"
#include "tests/test_support.h"

namespace kvstream::profiling {
namespace {

class ShippedProfiles : public test_support::TempDirTest {
 protected:
  void write(const std::filesystem::path& relative) {
    std::filesystem::create_directories((dir_ / relative).parent_path());
    std::ofstream(dir_ / relative) << "{}";
  }
};

TEST_F(ShippedProfiles, MeasuredReplacesAnalyticOfTheSameName) {
  write("h100_mistral-7b.json");
  write("measured/h100_mistral-7b.json");
  write("measured/h200_llama-2-70b.json");
  write("a40_mistral-7b.json");
  const auto h100 = choose_hardware_profile("h100_mistral-7b", dir_);
  EXPECT_EQ(h100.file, (dir_ / "measured/h100_mistral-7b.json").string());
  EXPECT_EQ(h100.replaced, (dir_ / "h100_mistral-7b.json").string());
  const auto h200 = choose_hardware_profile("h200_llama-2-70b", dir_);
  EXPECT_EQ(h200.file, (dir_ / "measured/h200_llama-2-70b.json").string());
  EXPECT_EQ(h200.replaced, "");
  const auto a40 = choose_hardware_profile("a40_mistral-7b", dir_);
  EXPECT_EQ(a40.file, (dir_ / "a40_mistral-7b.json").string());
  EXPECT_EQ(a40.replaced, "");
  const std::string path = (dir_ / "h100_mistral-7b.json").string();  // a path is never replaced
  EXPECT_EQ(choose_hardware_profile(path, dir_).file, path);
  EXPECT_EQ(choose_hardware_profile(path, dir_).replaced, "");

  EXPECT_EQ(shipped_hardware_profiles(dir_),
            (std::vector<std::string>{"a40_mistral-7b", "h100_mistral-7b", "h200_llama-2-70b"}));
  try {
    choose_hardware_profile("tpu", dir_);
    FAIL() << "no error for an unknown name";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("(shipped: a40_mistral-7b h100_mistral-7b h200_llama-2-70b)"), std::string::npos)
        << e.what();
  }
}

TEST(ShippedProfilesInTheTree, ResolveByName) {
  const auto h100 = choose_hardware_profile("h100_mistral-7b");
  EXPECT_TRUE(std::filesystem::is_regular_file(h100.file)) << h100.file;
  EXPECT_EQ(resolve_hardware_profile("h100_mistral-7b"), h100.file);
  const auto names = shipped_hardware_profiles();
  EXPECT_NE(std::find(names.begin(), names.end(), "cpu_stories260K"), names.end());
}

}  // namespace
}  // namespace kvstream::profiling
