// A stable 64-bit content hash (FNV-1a) as 16 hex digits: names runs and cached profiles by what
// they are made of, the same on every platform and in every process.
#pragma once
#include <cstdint>
#include <cstdio>
#include <string>

namespace kvstream::common {

inline uint64_t fnv1a64(const void* data, size_t size, uint64_t hash = 0xcbf29ce484222325ull) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < size; ++i) hash = (hash ^ bytes[i]) * 0x100000001b3ull;
  return hash;
}

inline std::string hex64(uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(value));
  return text;
}

inline std::string content_hash(const std::string& text) { return hex64(fnv1a64(text.data(), text.size())); }

}  // namespace kvstream::common
