// Builds GGUF files byte by byte for the models/ tests (little-endian, as the format requires).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "models/gguf_file.h"

namespace kvstream::test_support {

using models::GgufType;

// Appends GGUF fields to `bytes`; `marks` remembers where named parts start.
struct GgufBuilder {
  std::string bytes;
  std::map<std::string, size_t> marks;

  template <class T>
  void put(T v) {
    bytes.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void str(const std::string& s) {
    put<uint64_t>(s.size());
    bytes += s;
  }
  void mark(const std::string& name) { marks[name] = bytes.size(); }
  void header(uint32_t version, uint64_t tensors, uint64_t kvs) {
    bytes += "GGUF";
    put(version);
    put(tensors);
    put(kvs);
  }
  template <class T>
  void kv(const std::string& key, GgufType type, T v) {
    mark(key);
    str(key);
    put(static_cast<uint32_t>(type));
    put(v);
  }
  void kv_string(const std::string& key, const std::string& value) {
    mark(key);
    str(key);
    put(static_cast<uint32_t>(GgufType::kString));
    str(value);
  }
  void kv_strings(const std::string& key, const std::vector<std::string>& values) {
    mark(key);
    str(key);
    put(static_cast<uint32_t>(GgufType::kArray));
    put(static_cast<uint32_t>(GgufType::kString));
    put<uint64_t>(values.size());
    for (const std::string& v : values) str(v);
  }
  template <class T>
  void kv_array(const std::string& key, GgufType element_type, const std::vector<T>& values) {
    mark(key);
    str(key);
    put(static_cast<uint32_t>(GgufType::kArray));
    put(static_cast<uint32_t>(element_type));
    put<uint64_t>(values.size());
    for (T v : values) put(v);
  }
  void pad(size_t alignment) { bytes.resize((bytes.size() + alignment - 1) / alignment * alignment, '\0'); }
};

}  // namespace kvstream::test_support
