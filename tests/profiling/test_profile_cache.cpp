// The profile cache gives back what was stored for the same inputs, misses on other inputs, and
// refuses an entry that is cut, not JSON, or of another format or version, naming its file: an
// entry is reused complete or not at all.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>

#include "profiling/profile_cache.h"
#include "tests/test_support.h"

namespace kvstream::profiling {
namespace {

class ProfileCacheTest : public test_support::TempDirTest {
 protected:
  const nlohmann::json inputs_ = {{"model", "stories260K"}, {"chunk_tokens", 256}, {"codecs", {"cachegen"}}};
  const nlohmann::json result_ = {{"profile", {{"chunks", 2}}}, {"levels", {0, 1, 2}}};

  std::filesystem::path entry_file() const { return ProfileCache(dir_).path(ProfileCache::key(inputs_)); }

  // Stores the entry, then rewrites its file with `edit` applied to the stored JSON.
  void store_edited(const std::function<void(nlohmann::json&)>& edit) const {
    ProfileCache(dir_).store(inputs_, result_);
    nlohmann::json entry = nlohmann::json::parse(std::ifstream(entry_file()));
    edit(entry);
    std::ofstream(entry_file()) << entry.dump();
  }

  std::string load_error() const {
    try {
      ProfileCache(dir_).load(inputs_);
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "";
  }
};

TEST_F(ProfileCacheTest, GivesBackWhatWasStoredForTheSameInputs) {
  const ProfileCache cache(dir_);
  EXPECT_FALSE(cache.load(inputs_).has_value());
  cache.store(inputs_, result_);
  EXPECT_EQ(cache.load(inputs_), result_);
  nlohmann::json other = inputs_;
  other["chunk_tokens"] = 512;
  EXPECT_FALSE(cache.load(other).has_value());
}

TEST_F(ProfileCacheTest, AnEntryForOtherInputsUnderTheSameKeyIsAMiss) {
  store_edited([](nlohmann::json& entry) { entry["inputs"]["chunk_tokens"] = 1; });  // as after a hash collision
  EXPECT_FALSE(ProfileCache(dir_).load(inputs_).has_value());
}

TEST_F(ProfileCacheTest, ACutEntryIsRefusedNamingItsFile) {
  ProfileCache(dir_).store(inputs_, result_);
  const auto size = std::filesystem::file_size(entry_file());
  std::filesystem::resize_file(entry_file(), size / 2);
  const std::string error = load_error();
  EXPECT_NE(error.find(entry_file().string()), std::string::npos) << error;
  EXPECT_NE(error.find("corrupt profile cache entry"), std::string::npos) << error;
}

TEST_F(ProfileCacheTest, AnEntryOfAnotherFormatOrVersionIsRefused) {
  store_edited([](nlohmann::json& entry) { entry["format"] = "nope"; });
  EXPECT_NE(load_error().find("\"format\" is not \"kvstream-profile-cache\""), std::string::npos) << load_error();
  store_edited([](nlohmann::json& entry) { entry["version"] = 99; });
  EXPECT_NE(load_error().find("\"version\" is not 1"), std::string::npos) << load_error();
  store_edited([](nlohmann::json& entry) { entry.erase("version"); });
  EXPECT_NE(load_error().find("\"version\" is not 1"), std::string::npos) << load_error();
  store_edited([](nlohmann::json& entry) { entry.erase("result"); });
  EXPECT_NE(load_error().find("no \"inputs\" or no \"result\""), std::string::npos) << load_error();
  EXPECT_NE(load_error().find(entry_file().string()), std::string::npos) << load_error();
}

}  // namespace
}  // namespace kvstream::profiling
