// CacheGen quality ladders (docs/CACHEGEN.md §7): a level assigns a bin count to every K and V layer.
// Ladders are JSON files in codec/ladders/ (FORMAT.md documents the schema); a ladder is written for
// a reference layer count and mapped to a model's L by its layer rule:
//   exact  the model must have exactly that many layers (the artifact's Mistral-7B and 70B tables)
//   scale  range ends t become max(prev + 1, rint(t * L / ref)) (at least one layer per range while
//          layers remain; rint = half-to-even, as the reference computation), last end = L
//   clip   range ends become min(t, L) (LMCache's default for any HF model), with an optional
//          "uniform_below_layers" fallback that uses one bin count everywhere for small models
// A ladder file with "codec": "transform" holds the transform codec's levels instead: a relative
// distortion per level (codec/transform/transform_calibration.h), levels 1..N, lowest quality first. Both kinds
// are what `kvstream calibrate-ladder` writes (eval/ladder_calibration.h).
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "codec/entropy/cdf.h"

namespace kvstream::codec {

inline constexpr int kMinBins = 4;   // Q = bins/2 - 1 >= 1
inline constexpr int kMaxBins = kMaxAlphabet;  // the alphabet M is the largest bin count
// Level numbers are one byte in a CacheGen bitstream (PARM, FORMAT.md) and in an offline CDF table
// (.kvcdf): a ladder's levels are numbered 1..255, so it has at most 255.
inline constexpr int kMaxLadderLevel = 255;

struct LevelSpec {
  int level = 0;
  std::vector<int> key_bins;    // one per layer
  std::vector<int> value_bins;  // one per layer

  int layers() const { return static_cast<int>(key_bins.size()); }
  int alphabet() const;                         // M = max bins over K and V
  int bins_of_row(int row) const { return row < layers() ? key_bins[row] : value_bins[row - layers()]; }
  // Throws std::invalid_argument unless both lists have `layers` entries with bins in [4, 64].
  void validate(int layers) const;
  bool operator==(const LevelSpec&) const = default;
};

class Ladder {
 public:
  // Built-in name (a file stem in codec/ladders/: generic, mistral-7b, llama-2-70b, lmcache-default,
  // and the calibrate-ladder outputs smollm2-calibrated, stories260k-calibrated) or a path. Built-in
  // ladders for a model carry its architecture's name; "llama-70b", the 70B ladder's earlier name, is
  // still read as "llama-2-70b".
  static Ladder from_name_or_path(const std::string& name_or_path);
  static Ladder load(const std::filesystem::path& path);
  static std::vector<std::string> builtin_names();

  const std::string& name() const { return name_; }
  const std::string& codec() const { return codec_; }  // "cachegen" or "transform"
  // A fingerprint of what decides the levels (the file without "name", "description", "source" and
  // "calibration"): two ladders with one id give the same bins or distortions. Caches keyed by a
  // codec spec that names a ladder include it (Codec::content_id), so an edited file is re-measured.
  uint64_t id() const { return id_; }
  std::vector<int> levels() const;  // ascending
  // A transform ladder's relative distortion per level, lowest quality (largest) first; throws
  // std::invalid_argument for a CacheGen ladder.
  std::vector<double> distortions() const;
  // The level's per-layer bins for a model with `layers` layers; throws std::invalid_argument if the
  // level is unknown, the ladder cannot apply to that layer count or it is a transform ladder.
  LevelSpec level_spec(int level, int layers) const;

 private:
  struct Range {
    int end;  // exclusive, in reference layers
    int bins;
  };
  struct Level {
    int level;
    std::vector<Range> key, value;  // CacheGen
    double distortion = 0;          // transform
  };
  enum class Rule { kExact, kScale, kClip };
  std::vector<int> map_ranges(const std::vector<Range>& ranges, int layers) const;

  std::string name_;
  std::string codec_ = "cachegen";
  std::string path_;
  int reference_layers_ = 0;
  Rule rule_ = Rule::kExact;
  int uniform_below_layers_ = 0;  // clip rule: models with fewer layers use uniform_bins_ everywhere
  int uniform_bins_ = 0;
  std::vector<Level> levels_;
  uint64_t id_ = 0;
};

}  // namespace kvstream::codec
