// CacheGen level ladders (docs/CACHEGEN.md §7): the built-in ladders mapped to concrete layer counts,
// against the tables they come from (the artifact's Mistral-7B / 70B configs, LMCache's default and
// the L=5 scaling of docs/DATA.md §2), and errors for malformed ladder files.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "codec/codec.h"
#include "codec/ladder.h"
#include "tests/test_support.h"

namespace kvstream::codec {
namespace {

namespace fs = std::filesystem;

// Per-layer bins from (end, bins) ranges over `layers` layers, e.g. {{10, 32}, {32, 16}}.
std::vector<int> ranges(std::initializer_list<std::pair<int, int>> list) {
  std::vector<int> out;
  for (const auto& [end, bins] : list) out.resize(size_t(end), bins);
  return out;
}

void expect_spec(const Ladder& ladder, int level, int layers, const std::vector<int>& key, const std::vector<int>& value) {
  SCOPED_TRACE(ladder.name() + " level " + std::to_string(level) + " L=" + std::to_string(layers));
  const LevelSpec spec = ladder.level_spec(level, layers);
  EXPECT_EQ(spec.level, level);
  EXPECT_EQ(spec.key_bins, key);
  EXPECT_EQ(spec.value_bins, value);
  EXPECT_NO_THROW(spec.validate(layers));
  int alphabet = 0;
  for (int b : key) alphabet = std::max(alphabet, b);
  for (int b : value) alphabet = std::max(alphabet, b);
  EXPECT_EQ(spec.alphabet(), alphabet);
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  ADD_FAILURE() << "no std::invalid_argument thrown";
  return "";
}

TEST(Ladder, BuiltinNamesLoad) {
  EXPECT_EQ(Ladder::builtin_names(), std::vector<std::string>({"generic", "mistral-7b", "llama-2-70b", "lmcache-default",
                                                              "smollm2-calibrated", "stories260k-calibrated"}));
  for (const auto& name : Ladder::builtin_names()) EXPECT_EQ(Ladder::from_name_or_path(name).name(), name);
  EXPECT_EQ(Ladder::from_name_or_path("generic").levels(), std::vector<int>({1, 2, 3}));
  EXPECT_EQ(Ladder::from_name_or_path("mistral-7b").levels(), std::vector<int>({1, 2, 3}));
  EXPECT_EQ(Ladder::from_name_or_path("llama-2-70b").levels(), std::vector<int>({1}));
  // The 70B ladder's earlier name still reads it.
  EXPECT_EQ(Ladder::from_name_or_path("llama-70b").id(), Ladder::from_name_or_path("llama-2-70b").id());
  EXPECT_EQ(Ladder::from_name_or_path("lmcache-default").levels(), std::vector<int>({1}));
}

TEST(Ladder, GenericAtFiveLayersIsTheSourcesTable) {
  // docs/DATA.md §2: level 3 = 32 everywhere; level 2 = K 0-1 at 32, 2-4 at 16, V 0 at 32, 1-4 at 16;
  // level 1 = K 0-2 at 16, 3-4 at 12, V 0 at 16, 1-4 at 12.
  const Ladder generic = Ladder::from_name_or_path("generic");
  expect_spec(generic, 1, 5, {16, 16, 16, 12, 12}, {16, 12, 12, 12, 12});
  expect_spec(generic, 2, 5, {32, 32, 16, 16, 16}, {32, 16, 16, 16, 16});
  expect_spec(generic, 3, 5, {32, 32, 32, 32, 32}, {32, 32, 32, 32, 32});
  EXPECT_EQ(generic.level_spec(1, 5).alphabet(), 16);
  EXPECT_EQ(generic.level_spec(2, 5).alphabet(), 32);
}

TEST(Ladder, GenericAt32LayersIsMistral7b) {
  const Ladder generic = Ladder::from_name_or_path("generic");
  const Ladder mistral = Ladder::from_name_or_path("mistral-7b");
  // docs/CACHEGEN.md §7 Mistral-7B table: K [0,10) [10,20) [20,32), V [0,2) [2,32).
  expect_spec(mistral, 1, 32, ranges({{10, 16}, {20, 16}, {32, 12}}), ranges({{2, 16}, {32, 12}}));
  expect_spec(mistral, 2, 32, ranges({{10, 32}, {20, 16}, {32, 16}}), ranges({{2, 32}, {32, 16}}));
  expect_spec(mistral, 3, 32, ranges({{32, 32}}), ranges({{32, 32}}));
  for (int level : {1, 2, 3}) EXPECT_EQ(generic.level_spec(level, 32), mistral.level_spec(level, 32)) << level;
}

TEST(Ladder, ExactLaddersRejectOtherLayerCounts) {
  const Ladder mistral = Ladder::from_name_or_path("mistral-7b");
  const std::string message = error_of([&] { mistral.level_spec(2, 5); });
  EXPECT_NE(message.find("generic"), std::string::npos) << message;
  EXPECT_NE(message.find("32"), std::string::npos) << message;
  EXPECT_THROW(Ladder::from_name_or_path("llama-2-70b").level_spec(1, 32), std::invalid_argument);
}

TEST(Ladder, UnknownLevelAndBadLayerCount) {
  const Ladder generic = Ladder::from_name_or_path("generic");
  const std::string message = error_of([&] { generic.level_spec(4, 5); });
  EXPECT_NE(message.find("1, 2, 3"), std::string::npos) << message;
  EXPECT_THROW(generic.level_spec(0, 5), std::invalid_argument);
  EXPECT_THROW(generic.level_spec(2, 0), std::invalid_argument);
  EXPECT_THROW(generic.level_spec(2, -3), std::invalid_argument);
}

TEST(Ladder, Llama70bAt80Layers) {
  // docs/CACHEGEN.md §7 70B row: K [0,20)=32, [20,40)=32, [40,80)=16; V [0,20)=32, [20,80)=16.
  expect_spec(Ladder::from_name_or_path("llama-2-70b"), 1, 80, ranges({{40, 32}, {80, 16}}), ranges({{20, 32}, {80, 16}}));
}

TEST(Ladder, LmcacheDefault) {
  const Ladder lmcache = Ladder::from_name_or_path("lmcache-default");
  // Fewer than 10 layers: 32 everywhere.
  expect_spec(lmcache, 1, 5, std::vector<int>(5, 32), std::vector<int>(5, 32));
  expect_spec(lmcache, 1, 9, std::vector<int>(9, 32), std::vector<int>(9, 32));
  // glm-4-9b-chat (40 layers): K [0,10)=32, [10,40)=16; V [0,2)=32, [2,40)=16.
  expect_spec(lmcache, 1, 40, ranges({{10, 32}, {40, 16}}), ranges({{2, 32}, {40, 16}}));
  expect_spec(lmcache, 1, 32, ranges({{10, 32}, {32, 16}}), ranges({{2, 32}, {32, 16}}));
  expect_spec(lmcache, 1, 10, ranges({{10, 32}}), ranges({{2, 32}, {10, 16}}));
}

TEST(Ladder, GenericAtSmallLayerCounts) {
  // scale rule: end_i = min(max(prev + 1, rint(t_i·L/32)), max(prev + 1, L - later ranges)).
  const Ladder generic = Ladder::from_name_or_path("generic");
  // L = 1: the first range takes the only layer.
  expect_spec(generic, 1, 1, {16}, {16});
  expect_spec(generic, 2, 1, {32}, {32});
  expect_spec(generic, 3, 1, {32}, {32});
  // L = 2: K ends rint(0.625) = 1, then 2; V ends max(1, rint(0.125)) = 1, then 2.
  expect_spec(generic, 1, 2, {16, 16}, {16, 12});
  expect_spec(generic, 2, 2, {32, 16}, {32, 16});
  // L = 3: K ends 1, 2, 3 (one layer per range); V ends 1, 3.
  expect_spec(generic, 1, 3, {16, 16, 12}, {16, 12, 12});
  expect_spec(generic, 2, 3, {32, 16, 16}, {32, 16, 16});
  for (int layers = 1; layers <= 100; ++layers)
    for (int level : generic.levels()) {
      const LevelSpec spec = generic.level_spec(level, layers);
      ASSERT_NO_THROW(spec.validate(layers)) << "L=" << layers;
      // The first layer always gets the first range's bins; from L = 3 on, the last layer the last range's.
      EXPECT_EQ(spec.key_bins.front(), level == 1 ? 16 : 32) << "L=" << layers;
      EXPECT_EQ(spec.value_bins.front(), level == 1 ? 16 : 32) << "L=" << layers;
      const int last = level == 1 ? 12 : level == 2 ? 16 : 32;
      if (layers >= 3) {
        EXPECT_EQ(spec.key_bins.back(), last) << "L=" << layers;
      }
      if (layers >= 2) {
        EXPECT_EQ(spec.value_bins.back(), last) << "L=" << layers;
      }
    }
}

TEST(LevelSpec, Validate) {
  LevelSpec spec{2, {32, 16}, {4, 64}};
  EXPECT_NO_THROW(spec.validate(2));
  EXPECT_EQ(spec.alphabet(), 64);
  EXPECT_EQ(spec.bins_of_row(0), 32);
  EXPECT_EQ(spec.bins_of_row(3), 64);
  EXPECT_THROW(spec.validate(3), std::invalid_argument);  // wrong number of entries
  for (int bad : {0, 3, 65, 255}) {
    LevelSpec b = spec;
    b.value_bins[0] = bad;
    EXPECT_THROW(b.validate(2), std::invalid_argument) << bad;
  }
  LevelSpec uneven{1, {32, 16}, {32}};
  EXPECT_THROW(uneven.validate(2), std::invalid_argument);
}

// Writes ladder files into a fresh temporary directory.
class LadderFile : public test_support::TempDirTest {
 protected:

  fs::path write(const std::string& name, const std::string& json) {
    const fs::path path = dir_ / name;
    std::ofstream(path) << json;
    return path;
  }

  // The load error for `json`, which must mention both the file and `json_path`.
  void expect_load_error(const std::string& json, const std::string& json_path) {
    const fs::path path = write("bad.json", json);
    const std::string message = error_of([&] { Ladder::load(path); });
    EXPECT_NE(message.find(path.string()), std::string::npos) << message;
    EXPECT_NE(message.find(json_path), std::string::npos) << "expected " << json_path << " in: " << message;
  }

  // A 4-layer ladder file with the given level list and rule fields.
  static std::string ladder_json(const std::string& levels, const std::string& extra = "\"layer_rule\": \"exact\"") {
    return "{\"name\": \"custom\", \"layers\": 4, " + extra + ", \"levels\": " + levels + "}";
  }

};

const std::string kGoodLevels =
    R"([{"level": 1, "key": [{"until": 2, "bins": 8}, {"until": 4, "bins": 4}], "value": [{"until": 4, "bins": 8}]},
        {"level": 5, "key": [{"until": 4, "bins": 64}], "value": [{"until": 1, "bins": 64}, {"until": 4, "bins": 12}]}])";

TEST_F(LadderFile, CustomLadderByPath) {
  const fs::path path = write("custom.json", ladder_json(kGoodLevels));
  const Ladder ladder = Ladder::from_name_or_path(path.string());
  EXPECT_EQ(ladder.name(), "custom");
  EXPECT_EQ(ladder.levels(), std::vector<int>({1, 5}));
  expect_spec(ladder, 1, 4, {8, 8, 4, 4}, {8, 8, 8, 8});
  expect_spec(ladder, 5, 4, {64, 64, 64, 64}, {64, 12, 12, 12});
  EXPECT_THROW(ladder.level_spec(1, 5), std::invalid_argument);  // exact rule
}

// The id names what decides the levels: not the name or the documentation, but every bin and rule.
TEST_F(LadderFile, TheIdFollowsTheLevelsNotTheNames) {
  const uint64_t id = Ladder::load(write("a.json", ladder_json(kGoodLevels))).id();
  std::string renamed = ladder_json(kGoodLevels);
  renamed.replace(renamed.find("custom"), 6, "other\", \"description\": \"same bins\", \"source\": \"hand");
  EXPECT_EQ(Ladder::load(write("b.json", renamed)).id(), id);
  std::string one_bin = kGoodLevels;
  one_bin.replace(one_bin.find("\"bins\": 8"), 9, "\"bins\": 9");
  EXPECT_NE(Ladder::load(write("c.json", ladder_json(one_bin))).id(), id);
  EXPECT_NE(Ladder::load(write("d.json", ladder_json(kGoodLevels, "\"layer_rule\": \"scale\""))).id(), id);

  // A codec naming the file carries it in its content id; the baselines have none.
  const fs::path path = write("mine.json", ladder_json(kGoodLevels));
  const std::string before = make_codec("cachegen:ladder=" + path.string())->content_id();
  EXPECT_EQ(before.rfind("ladder=", 0), 0u) << before;
  write("mine.json", ladder_json(one_bin));
  EXPECT_NE(make_codec("cachegen:ladder=" + path.string())->content_id(), before);
  EXPECT_EQ(make_codec("quant:bits=8")->content_id(), "");
}

TEST_F(LadderFile, UnknownNameListsTheBuiltins) {
  const std::string message = error_of([&] { Ladder::from_name_or_path((dir_ / "missing.json").string()); });
  EXPECT_NE(message.find("generic, mistral-7b, llama-2-70b, lmcache-default, smollm2-calibrated"), std::string::npos) << message;
  EXPECT_NE(message.find("missing.json"), std::string::npos) << message;
}

TEST_F(LadderFile, MalformedFilesNameTheJsonPath) {
  expect_load_error("{\"name\": ", "invalid JSON");
  expect_load_error("{\"layers\": 4}", "$.name");
  expect_load_error("{\"name\": \"x\", \"layers\": \"4\"}", "$.layers");
  expect_load_error("{\"name\": \"x\", \"layers\": 0, \"levels\": []}", "$.layers");
  expect_load_error(ladder_json(kGoodLevels, "\"layer_rule\": \"stretch\""), "$.layer_rule");
  expect_load_error(ladder_json("[]"), "$.levels");
  expect_load_error(ladder_json(R"([{"key": [{"until": 4, "bins": 8}], "value": [{"until": 4, "bins": 8}]}])"),
                    "$.levels[0].level");
  // bins out of [4, 64] in the second key range
  expect_load_error(ladder_json(R"([{"level": 1, "key": [{"until": 2, "bins": 8}, {"until": 4, "bins": 3}],
                                     "value": [{"until": 4, "bins": 8}]}])"),
                    "$.levels[0].key[1].bins");
  expect_load_error(ladder_json(R"([{"level": 1, "key": [{"until": 4, "bins": 8}],
                                     "value": [{"until": 4, "bins": 65}]}])"),
                    "$.levels[0].value[0].bins");
  // range ends must increase
  expect_load_error(ladder_json(R"([{"level": 1, "key": [{"until": 2, "bins": 8}, {"until": 2, "bins": 8}],
                                     "value": [{"until": 4, "bins": 8}]}])"),
                    "$.levels[0].key[1].until");
  // last range must end at "layers"
  expect_load_error(ladder_json(R"([{"level": 1, "key": [{"until": 4, "bins": 8}],
                                     "value": [{"until": 3, "bins": 8}]}])"),
                    "$.levels[0].value");
  expect_load_error(ladder_json(R"([{"level": 1, "key": [], "value": [{"until": 4, "bins": 8}]}])"), "$.levels[0].key");
  expect_load_error(ladder_json(R"([{"level": 1, "key": [{"until": 4}], "value": [{"until": 4, "bins": 8}]}])"),
                    "$.levels[0].key[0].bins");
  // a level twice
  expect_load_error(ladder_json(R"([{"level": 2, "key": [{"until": 4, "bins": 8}], "value": [{"until": 4, "bins": 8}]},
                                    {"level": 2, "key": [{"until": 4, "bins": 8}], "value": [{"until": 4, "bins": 8}]}])"),
                    "$.levels[1].level");
  expect_load_error(ladder_json(kGoodLevels, "\"layer_rule\": \"clip\", \"uniform_below_layers\": {\"layers\": 2}"),
                    "$.uniform_below_layers.bins");
}

// A "layer_rule" that is not a string is a rejection naming its path, not nlohmann's type_error out
// of json::value (found by fuzz_ladder: fuzz/regressions/ladder/).
TEST_F(LadderFile, ALayerRuleThatIsNotAStringIsRefused) {
  for (const std::string rule : {"[]", "1", "null", "{\"rule\": \"exact\"}"}) {
    const fs::path path = write("bad.json", ladder_json(kGoodLevels, "\"layer_rule\": " + rule));
    EXPECT_THROW(Ladder::load(path), std::invalid_argument) << rule;
    expect_load_error(ladder_json(kGoodLevels, "\"layer_rule\": " + rule), "$.layer_rule");
  }
}

// Transform ladders (what `kvstream calibrate-ladder --codec transform:...` writes): a relative
// distortion per level, levels 1..N, lowest quality first; and no mixing of the two kinds.
TEST_F(LadderFile, TransformLaddersHoldDistortions) {
  const std::string good = R"({"name": "t", "codec": "transform", "levels": [{"level": 1, "distortion": 0.3},
                                                                              {"level": 2, "distortion": 0.01}]})";
  const Ladder ladder = Ladder::load(write("t.json", good));
  EXPECT_EQ(ladder.codec(), "transform");
  EXPECT_EQ(ladder.levels(), std::vector<int>({1, 2}));
  EXPECT_EQ(ladder.distortions(), std::vector<double>({0.3, 0.01}));
  EXPECT_NE(error_of([&] { ladder.level_spec(1, 4); }).find("not CacheGen bins"), std::string::npos);
  EXPECT_NE(error_of([&] { Ladder::from_name_or_path("generic").distortions(); }).find("CacheGen bins"), std::string::npos);
  EXPECT_EQ(Ladder::from_name_or_path("generic").codec(), "cachegen");

  const auto transform = [](const std::string& levels) {
    return R"({"name": "t", "codec": "transform", "levels": )" + levels + "}";
  };
  expect_load_error(R"({"name": "t", "codec": "zstd", "levels": []})", "$.codec");
  expect_load_error(R"({"name": "t", "codec": 1, "levels": []})", "$.codec");
  expect_load_error(transform("[]"), "$.levels");
  expect_load_error(transform(R"([{"level": 2, "distortion": 0.1}])"), "$.levels[0].level");
  expect_load_error(transform(R"([{"level": 1}])"), "$.levels[0].distortion");
  expect_load_error(transform(R"([{"level": 1, "distortion": "0.1"}])"), "$.levels[0].distortion");
  expect_load_error(transform(R"([{"level": 1, "distortion": 0}])"), "$.levels[0].distortion");
  expect_load_error(transform(R"([{"level": 1, "distortion": 1.5}])"), "$.levels[0].distortion");
  expect_load_error(transform(R"([{"level": 1, "distortion": 0.1}, {"level": 2, "distortion": 0.2}])"),
                    "$.levels[1].distortion");
  // Below the format's range (codec/transform/transform_distortion.h): the clamp would decide the values.
  const std::string tiny = error_of([&] { Ladder::load(write("tiny.json", transform(R"([{"level": 1, "distortion": 1e-20}])"))); });
  EXPECT_NE(tiny.find("$.levels[0].distortion: relative distortion 1e-20 is outside [1e-08, 1]"), std::string::npos) << tiny;
}

// Level numbers are one byte in a bitstream and in a .kvcdf table: a ladder has levels 1..255 only
// (level 256 was once written as 0, and cdf-build wrote a count of 44 for 300 levels).
TEST_F(LadderFile, LevelsAreNumberedOneTo255) {
  nlohmann::json many = nlohmann::json::array();
  for (int level = 1; level <= 256; ++level)
    many.push_back({{"level", level}, {"key", {{{"until", 4}, {"bins", 8}}}}, {"value", {{{"until", 4}, {"bins", 8}}}}});
  expect_load_error(ladder_json(many.dump()), "$.levels: expected at most 255 levels");
  for (const char* level : {"0", "256", "-1"})
    expect_load_error(ladder_json(std::string(R"([{"level": )") + level +
                                  R"(, "key": [{"until": 4, "bins": 8}], "value": [{"until": 4, "bins": 8}]}])"),
                      "$.levels[0].level: expected a level in 1..255");
  nlohmann::json distortions = {{"name", "t"}, {"codec", "transform"}, {"levels", nlohmann::json::array()}};
  for (int level = 1; level <= 256; ++level)
    distortions["levels"].push_back({{"level", level}, {"distortion", 1.0 / level}});
  expect_load_error(distortions.dump(), "$.levels: expected at most 255");
}

}  // namespace
}  // namespace kvstream::codec
