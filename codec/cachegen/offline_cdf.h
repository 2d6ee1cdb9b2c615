// Offline per-model CDF tables (docs/CACHEGEN.md §3 "profiled offline per model", §14 item 1): symbol
// histograms over profiling contexts, one 16-bit CDF per (level, row, channel), stored once in a
// .kvcdf file and referenced from each bitstream by a 64-bit id instead of shipping a table per chunk.
// File layout (little-endian; FORMAT.md §"Offline CDF table"):
//   "KVCD" | version u16 | delta group u8 | levels u8 | L u16 | C u32
//   per level: level u8 | M u8 | key bins u8[L] | value bins u8[L] | cdf u16[2L][C][M+1]
//   CRC32C u32 over everything before it
// id = CRC32C(file) << 32 | CRC32C(file, seed 0x9E3779B9), over everything before the CRC.
#pragma once
#include <cstdint>
#include <filesystem>
#include <vector>

#include "codec/cachegen/cachegen_quantizer.h"
#include "codec/ladder.h"

namespace kvstream::codec {

class OfflineCdfTable {
 public:
  struct LevelTable {
    LevelSpec spec;
    int alphabet = 0;           // M
    std::vector<uint16_t> cdf;  // [2L][C][M+1]
    const uint16_t* row(int row, int channel, int channels) const {
      return cdf.data() + (size_t(row) * channels + channel) * (alphabet + 1);
    }
  };

  // Histograms of the symbols every level of `ladder` gives on the profiling contexts.
  static OfflineCdfTable build(const std::vector<KvChunkView>& contexts, const Ladder& ladder, TokenMode mode);
  static OfflineCdfTable load(const std::filesystem::path& path);  // throws std::runtime_error naming the file
  void save(const std::filesystem::path& path) const;              // atomic (temp file + rename)

  uint64_t id() const { return id_; }
  int layers() const { return layers_; }
  int channels() const { return channels_; }
  TokenMode token_mode() const { return mode_; }
  const LevelTable* level(int level) const;  // nullptr if absent
  std::vector<uint8_t> serialize() const;

 private:
  static OfflineCdfTable parse(const std::vector<uint8_t>& bytes, const std::string& where);
  void compute_id();

  int layers_ = 0;
  int channels_ = 0;
  TokenMode mode_;
  std::vector<LevelTable> levels_;
  uint64_t id_ = 0;
};

}  // namespace kvstream::codec
