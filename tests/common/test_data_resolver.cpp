// The data resolver's search order, fallbacks and error messages (docs/ARCHITECTURE.md §6).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/data_resolver.h"

namespace fs = std::filesystem;
using namespace kvstream::common;

namespace {

constexpr const char* kFixture = "kv/stories260K_tinystories_4x512.safetensors";

// The DataNotFound message of `lookup`, after checking that it names `what` and every search root.
std::string not_found_message(const std::function<void()>& lookup, const std::string& what) {
  try {
    lookup();
  } catch (const DataNotFound& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find(what), std::string::npos) << message;
    for (const auto& root : data_search_roots())
      EXPECT_NE(message.find(root.string()), std::string::npos) << "root " << root << " not in: " << message;
    return message;
  }
  ADD_FAILURE() << "expected DataNotFound for " << what;
  return "";
}

// Each test gets an empty temporary directory and an empty user cache inside it; the environment
// variables and working directory the resolver reads are restored afterwards.
class DataResolver : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : kVars) {
      const char* value = std::getenv(name);
      saved_.emplace_back(name, value ? std::optional<std::string>(value) : std::nullopt);
    }
    cwd_ = fs::current_path();
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    tmp_ = fs::temp_directory_path() / ("kvstream_resolver_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(tmp_);
    fs::create_directories(tmp_ / "xdg");
    ::unsetenv("KVSTREAM_DATA");
    ::setenv("XDG_CACHE_HOME", (tmp_ / "xdg").c_str(), 1);
  }

  void TearDown() override {
    fs::current_path(cwd_);
    for (const auto& [name, value] : saved_) {
      if (value) {
        ::setenv(name, value->c_str(), 1);
      } else {
        ::unsetenv(name);
      }
    }
    fs::remove_all(tmp_);
  }

  // Creates `path` (and its parents) holding `text`.
  static void write_file(const fs::path& path, const std::string& text) {
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
  }

  static constexpr const char* kVars[] = {"KVSTREAM_DATA", "XDG_CACHE_HOME", "HOME"};
  std::vector<std::pair<const char*, std::optional<std::string>>> saved_;
  fs::path cwd_;
  fs::path tmp_;
};

TEST_F(DataResolver, EnvVarWinsOverSharedData) {
  const fs::path root = tmp_ / "override";
  write_file(root / kFixture, "override");
  ::setenv("KVSTREAM_DATA", root.c_str(), 1);

  EXPECT_EQ(resolve_data(kFixture), root / kFixture);
  EXPECT_EQ(data_search_roots().front(), root);
}

TEST_F(DataResolver, FallsBackToSharedDataForTheRealFixture) {
  ::setenv("KVSTREAM_DATA", "", 1);  // empty counts as unset
  ASSERT_EQ(data_search_roots().size(), 2u);

  const fs::path found = resolve_data(kFixture);
  EXPECT_EQ(found.parent_path().parent_path(), data_search_roots().front());
  EXPECT_EQ(found.parent_path().parent_path().filename(), "data");
  EXPECT_EQ(found.parent_path().parent_path().parent_path().filename(), "shared");
  EXPECT_EQ(fs::file_size(found), 1319264u);  // the fixture's size in shared/data
}

TEST_F(DataResolver, FallsBackToUserCache) {
  const fs::path cached = tmp_ / "xdg" / "kvstream" / "data" / "only/in/cache.txt";
  write_file(cached, "cached");

  EXPECT_EQ(data_cache_dir(), tmp_ / "xdg" / "kvstream" / "data");
  EXPECT_EQ(data_search_roots().back(), data_cache_dir());
  EXPECT_EQ(resolve_data("only/in/cache.txt"), cached);
}

TEST_F(DataResolver, CacheDirUsesHomeWithoutXdg) {
  ::unsetenv("XDG_CACHE_HOME");
  ::setenv("HOME", tmp_.c_str(), 1);
  EXPECT_EQ(data_cache_dir(), tmp_ / ".cache" / "kvstream" / "data");
}

TEST_F(DataResolver, MissingFileMessageNamesFileAndEveryRoot) {
  ::setenv("KVSTREAM_DATA", (tmp_ / "override").c_str(), 1);
  ASSERT_EQ(data_search_roots().size(), 3u);
  // A file that scripts/fetch-data.sh can fetch (SmolLM2's folder) is met with how to fetch it; one
  // that no data source lists (a misspelt name) is not.
  const std::string fetchable = not_found_message([] { resolve_data("models/smollm2/missing.gguf"); }, "models/smollm2/missing.gguf");
  EXPECT_NE(fetchable.find("run scripts/fetch-data.sh to download it into " + data_cache_dir().string()), std::string::npos)
      << fetchable;
  const std::string misspelt = not_found_message([] { resolve_data("models/nope/missing.bin"); }, "models/nope/missing.bin");
  EXPECT_EQ(misspelt.find("fetch-data"), std::string::npos) << misspelt;
  EXPECT_NE(misspelt.find("no data source lists 'models/nope/missing.bin' (docs/DATA.md lists the files kvstream uses): "
                          "check its name"), std::string::npos) << misspelt;
  const std::string traces = not_found_message([] { resolve_data("traces/mahimahi/ATT-LTE-driving.dwn"); }, "traces/mahimahi/ATT-LTE-driving.dwn");
  EXPECT_NE(traces.find("check its name"), std::string::npos) << traces;
}

TEST_F(DataResolver, ResolveInputPrefersAnExistingLiteralPath) {
  write_file(tmp_ / "local.txt", "local");
  EXPECT_EQ(resolve_input((tmp_ / "local.txt").string()), tmp_ / "local.txt");

  fs::current_path(tmp_);
  EXPECT_EQ(resolve_input("local.txt"), fs::path("local.txt"));
}

TEST_F(DataResolver, ResolveInputFallsBackToDataRoots) {
  const fs::path root = tmp_ / "override";
  write_file(root / "text/a.txt", "a");
  ::setenv("KVSTREAM_DATA", root.c_str(), 1);
  fs::current_path(tmp_);  // no text/a.txt here

  EXPECT_EQ(resolve_input("text/a.txt"), root / "text/a.txt");
}

TEST_F(DataResolver, ResolveInputMissingNamesLiteralPathAndRoots) {
  not_found_message([] { resolve_input("no/such/input.bin"); }, "no/such/input.bin");
}

}  // namespace
