// The bytes of an emulation that sends real KV (`kvstream emulate --model`, docs/EMULATION.md): what
// the KV server holds for every (chunk, choice), and what the client's connections received, kept
// for the jobs that decode or recompute it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

namespace kvstream::emulation {

struct ChunkPayloads {
  std::vector<std::vector<std::vector<uint8_t>>> levels;  // [chunk][level]: the chunk's bitstream at that level
  std::vector<std::vector<uint8_t>> text;                 // [chunk]: its token ids, uint32 little-endian

  // The bytes of `chunk` at `choice` (a level index, or -1 for text: sim::kText); nullptr when out of range.
  const std::vector<uint8_t>* find(uint64_t chunk, int64_t choice) const;
};

// Thread-safe: connections put what they read, executor jobs take it.
class ReceivedChunks {
 public:
  void put(size_t request, size_t chunk, std::vector<uint8_t> bytes);
  // The bytes put for (request, chunk), moved out; throws std::logic_error when there are none.
  std::vector<uint8_t> take(size_t request, size_t chunk);

 private:
  std::mutex mutex_;
  std::map<std::pair<size_t, size_t>, std::vector<uint8_t>> bytes_;
};

}  // namespace kvstream::emulation
