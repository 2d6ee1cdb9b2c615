#include "codec/ladder.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "codec/transform/transform_distortion.h"
#include "common/content_hash.h"
#include "common/json_reader.h"

namespace kvstream::codec {

int LevelSpec::alphabet() const {
  int m = 0;
  for (int b : key_bins) m = std::max(m, b);
  for (int b : value_bins) m = std::max(m, b);
  return m;
}

void LevelSpec::validate(int layers) const {
  if (static_cast<int>(key_bins.size()) != layers || static_cast<int>(value_bins.size()) != layers)
    throw std::invalid_argument("level " + std::to_string(level) + " has " + std::to_string(key_bins.size()) + "/" +
                                std::to_string(value_bins.size()) + " K/V bin entries for " + std::to_string(layers) +
                                " layers");
  for (const auto* list : {&key_bins, &value_bins})
    for (int b : *list)
      if (b < kMinBins || b > kMaxBins)
        throw std::invalid_argument("level " + std::to_string(level) + ": bins " + std::to_string(b) +
                                    " outside [" + std::to_string(kMinBins) + ", " + std::to_string(kMaxBins) + "]");
}

std::vector<std::string> Ladder::builtin_names() {
  return {"generic", "mistral-7b", "llama-2-70b", "lmcache-default", "smollm2-calibrated", "stories260k-calibrated"};
}

Ladder Ladder::from_name_or_path(const std::string& name_or_path) {
  const auto names = builtin_names();
  // The name the 70B ladder had before it took its architecture's (models/architecture_table.h).
  const std::string name = name_or_path == "llama-70b" ? "llama-2-70b" : name_or_path;
  if (std::find(names.begin(), names.end(), name) != names.end())
    return load(std::filesystem::path(KVSTREAM_LADDER_DIR) / (name + ".json"));
  if (std::filesystem::exists(name_or_path)) return load(name_or_path);
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  throw std::invalid_argument("ladder \"" + name_or_path + "\" is neither a built-in ladder (" + list +
                              ") nor an existing JSON file");
}

Ladder Ladder::load(const std::filesystem::path& path) {
  const std::string where = path.string();
  nlohmann::json j;
  try {
    j = common::read_json_file(where);
  } catch (const common::JsonError& e) {  // "<path>: cannot open file", or what is wrong with its JSON
    throw std::invalid_argument(e.what());
  }
  auto fail = [&](const std::string& json_path, const std::string& what) -> void {
    throw std::invalid_argument(where + ": " + json_path + ": " + what);
  };
  auto get_int = [&](const nlohmann::json& obj, const std::string& key, const std::string& json_path) {
    if (!obj.is_object() || !obj.contains(key) || !obj[key].is_number_integer())
      fail(json_path + "." + key, "expected an integer");
    return obj[key].get<int>();
  };
  Ladder ladder;
  ladder.path_ = where;
  {
    nlohmann::json decisive = j;
    if (decisive.is_object())
      for (const char* key : {"name", "description", "source", "calibration"}) decisive.erase(key);
    const std::string text = decisive.dump();  // keys sorted: one text per content
    ladder.id_ = common::fnv1a64(text.data(), text.size());
  }
  if (!j.is_object() || !j.contains("name") || !j["name"].is_string()) fail("$.name", "expected a string");
  ladder.name_ = j["name"].get<std::string>();
  if (j.contains("codec")) {
    if (!j["codec"].is_string() || (j["codec"] != "cachegen" && j["codec"] != "transform"))
      fail("$.codec", "expected \"cachegen\" or \"transform\"");
    ladder.codec_ = j["codec"].get<std::string>();
  }
  const auto check_levels = [&] {
    if (!j.contains("levels") || !j["levels"].is_array() || j["levels"].empty())
      fail("$.levels", "expected a non-empty array");
    if (j["levels"].size() > size_t(kMaxLadderLevel))
      fail("$.levels", "expected at most " + std::to_string(kMaxLadderLevel) + " levels (a level number is one byte), got " +
                           std::to_string(j["levels"].size()));
  };
  if (ladder.codec_ == "transform") {
    check_levels();
    // Levels 1..N in order, distortions in (0, 1] and decreasing: what the codec's levels are.
    for (size_t i = 0; i < j["levels"].size(); ++i) {
      const auto& lv = j["levels"][i];
      const std::string lp = "$.levels[" + std::to_string(i) + "]";
      Level level{get_int(lv, "level", lp), {}, {}, 0};
      if (level.level != static_cast<int>(i) + 1) fail(lp + ".level", "expected " + std::to_string(i + 1) + " (levels 1..N in order)");
      if (!lv.contains("distortion") || !lv["distortion"].is_number()) fail(lp + ".distortion", "expected a number");
      level.distortion = lv["distortion"].get<double>();
      if (const std::string error = transform_distortion_error(level.distortion); !error.empty()) fail(lp + ".distortion", error);
      if (i > 0 && !(level.distortion < ladder.levels_.back().distortion))
        fail(lp + ".distortion", "expected less than the level below's (lowest quality first)");
      ladder.levels_.push_back(level);
    }
    return ladder;
  }
  ladder.reference_layers_ = get_int(j, "layers", "$");
  if (ladder.reference_layers_ < 1) fail("$.layers", "expected a positive layer count");
  std::string rule = "exact";
  if (j.contains("layer_rule")) {
    if (!j["layer_rule"].is_string()) fail("$.layer_rule", "expected \"exact\", \"scale\" or \"clip\"");
    rule = j["layer_rule"].get<std::string>();
  }
  if (rule == "exact") ladder.rule_ = Rule::kExact;
  else if (rule == "scale") ladder.rule_ = Rule::kScale;
  else if (rule == "clip") ladder.rule_ = Rule::kClip;
  else fail("$.layer_rule", "expected \"exact\", \"scale\" or \"clip\", got \"" + rule + "\"");
  if (j.contains("uniform_below_layers")) {
    const auto& u = j["uniform_below_layers"];
    ladder.uniform_below_layers_ = get_int(u, "layers", "$.uniform_below_layers");
    ladder.uniform_bins_ = get_int(u, "bins", "$.uniform_below_layers");
  }
  check_levels();
  for (size_t i = 0; i < j["levels"].size(); ++i) {
    const auto& lv = j["levels"][i];
    const std::string lp = "$.levels[" + std::to_string(i) + "]";
    Level level{get_int(lv, "level", lp), {}, {}, 0};
    if (level.level < 1 || level.level > kMaxLadderLevel)
      fail(lp + ".level", "expected a level in 1.." + std::to_string(kMaxLadderLevel) + " (one byte in a bitstream), got " +
                              std::to_string(level.level));
    for (const char* part : {"key", "value"}) {
      const std::string pp = lp + "." + part;
      if (!lv.contains(part) || !lv[part].is_array() || lv[part].empty()) fail(pp, "expected a non-empty array");
      auto& ranges = std::string(part) == "key" ? level.key : level.value;
      int prev = 0;
      for (size_t r = 0; r < lv[part].size(); ++r) {
        const std::string rp = pp + "[" + std::to_string(r) + "]";
        Range range{get_int(lv[part][r], "until", rp), get_int(lv[part][r], "bins", rp)};
        if (range.end <= prev) fail(rp + ".until", "range ends must increase");
        if (range.bins < kMinBins || range.bins > kMaxBins)
          fail(rp + ".bins", "expected bins in [" + std::to_string(kMinBins) + ", " + std::to_string(kMaxBins) + "]");
        prev = range.end;
        ranges.push_back(range);
      }
      if (prev != ladder.reference_layers_)
        fail(pp, "the last range must end at layers = " + std::to_string(ladder.reference_layers_));
    }
    for (const auto& other : ladder.levels_)
      if (other.level == level.level) fail(lp + ".level", "level " + std::to_string(level.level) + " twice");
    ladder.levels_.push_back(level);
  }
  std::sort(ladder.levels_.begin(), ladder.levels_.end(), [](const Level& a, const Level& b) { return a.level < b.level; });
  return ladder;
}

std::vector<int> Ladder::levels() const {
  std::vector<int> out;
  for (const auto& l : levels_) out.push_back(l.level);
  return out;
}

std::vector<double> Ladder::distortions() const {
  if (codec_ != "transform")
    throw std::invalid_argument("ladder " + name_ + " holds CacheGen bins, not the transform codec's distortions");
  std::vector<double> out;
  for (const auto& l : levels_) out.push_back(l.distortion);
  return out;
}

std::vector<int> Ladder::map_ranges(const std::vector<Range>& ranges, int layers) const {
  std::vector<int> bins(static_cast<size_t>(layers), 0);
  int start = 0;
  for (size_t i = 0; i < ranges.size() && start < layers; ++i) {
    int end = layers;
    if (i + 1 < ranges.size()) {
      if (rule_ == Rule::kExact) {
        end = ranges[i].end;
      } else if (rule_ == Rule::kClip) {
        end = std::min(ranges[i].end, layers);
      } else {  // scale, keeping one layer for each later range while layers remain
        const double scaled = std::nearbyint(double(ranges[i].end) * layers / reference_layers_);
        const int later = static_cast<int>(ranges.size() - i - 1);
        end = std::max(start + 1, static_cast<int>(scaled));
        end = std::min(end, std::max(start + 1, layers - later));
      }
    }
    for (int l = start; l < std::min(end, layers); ++l) bins[static_cast<size_t>(l)] = ranges[i].bins;
    start = std::max(start, end);
  }
  return bins;
}

LevelSpec Ladder::level_spec(int level, int layers) const {
  const auto it = std::find_if(levels_.begin(), levels_.end(), [&](const Level& l) { return l.level == level; });
  if (it == levels_.end()) {
    std::string list;
    for (int l : levels()) list += (list.empty() ? "" : ", ") + std::to_string(l);
    throw std::invalid_argument("ladder " + name_ + " has no level " + std::to_string(level) + " (levels: " + list + ")");
  }
  if (codec_ != "cachegen")
    throw std::invalid_argument("ladder " + name_ + " holds the transform codec's distortions, not CacheGen bins");
  if (layers < 1) throw std::invalid_argument("ladder " + name_ + ": layer count must be positive");
  if (rule_ == Rule::kExact && layers != reference_layers_)
    throw std::invalid_argument("ladder " + name_ + " is defined for exactly " + std::to_string(reference_layers_) +
                                " layers, the model has " + std::to_string(layers) +
                                " (use the \"generic\" ladder, which scales to any layer count)");
  LevelSpec spec;
  spec.level = level;
  if (rule_ == Rule::kClip && layers < uniform_below_layers_) {
    spec.key_bins.assign(static_cast<size_t>(layers), uniform_bins_);
    spec.value_bins.assign(static_cast<size_t>(layers), uniform_bins_);
  } else {
    spec.key_bins = map_ranges(it->key, layers);
    spec.value_bins = map_ranges(it->value, layers);
  }
  spec.validate(layers);
  return spec;
}

}  // namespace kvstream::codec
