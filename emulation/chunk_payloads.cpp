#include "emulation/chunk_payloads.h"

#include <stdexcept>
#include <string>

namespace kvstream::emulation {

const std::vector<uint8_t>* ChunkPayloads::find(uint64_t chunk, int64_t choice) const {
  if (choice == -1) return chunk < text.size() ? &text[chunk] : nullptr;
  if (chunk >= levels.size() || choice < 0 || uint64_t(choice) >= levels[chunk].size()) return nullptr;
  return &levels[chunk][size_t(choice)];
}

void ReceivedChunks::put(size_t request, size_t chunk, std::vector<uint8_t> bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  bytes_[{request, chunk}] = std::move(bytes);
}

std::vector<uint8_t> ReceivedChunks::take(size_t request, size_t chunk) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = bytes_.find({request, chunk});
  if (it == bytes_.end())
    throw std::logic_error("request " + std::to_string(request) + ": chunk " + std::to_string(chunk) +
                           " was not received");
  std::vector<uint8_t> bytes = std::move(it->second);
  bytes_.erase(it);
  return bytes;
}

}  // namespace kvstream::emulation
