// Little-endian byte writer and a bounds-checked reader. The reader never reads past its span:
// a short read throws BitstreamError(kTruncated) naming the section being read.
#pragma once
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "codec/format/bitstream_error.h"

namespace kvstream::codec {

class ByteWriter {
 public:
  explicit ByteWriter(std::vector<uint8_t>& out) : out_(out) {}
  template <typename T>
  void put(T value) {  // unsigned integers, little-endian
    for (size_t i = 0; i < sizeof(T); ++i) out_.push_back(static_cast<uint8_t>(uint64_t(value) >> (8 * i)));
  }
  void bytes(std::span<const uint8_t> data) { out_.insert(out_.end(), data.begin(), data.end()); }
  void u16_array(std::span<const uint16_t> values) {
    for (uint16_t v : values) put<uint16_t>(v);
  }

 private:
  std::vector<uint8_t>& out_;
};

class ByteReader {
 public:
  ByteReader(std::span<const uint8_t> data, std::string section) : data_(data), section_(std::move(section)) {}
  template <typename T>
  T get() {
    const auto raw = take(sizeof(T));
    uint64_t value = 0;
    for (size_t i = 0; i < sizeof(T); ++i) value |= uint64_t(raw[i]) << (8 * i);
    return static_cast<T>(value);
  }
  std::span<const uint8_t> take(size_t n) {
    if (n > remaining())
      throw BitstreamError(BitstreamErrorKind::kTruncated, section_,
                           "needs " + std::to_string(n) + " more bytes at offset " + std::to_string(pos_) + ", has " +
                               std::to_string(remaining()));
    auto out = data_.subspan(pos_, n);
    pos_ += n;
    return out;
  }
  size_t remaining() const { return data_.size() - pos_; }
  size_t position() const { return pos_; }

 private:
  std::span<const uint8_t> data_;
  std::string section_;
  size_t pos_ = 0;
};

inline uint16_t load_u16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
inline uint32_t load_u32(const uint8_t* p) {
  return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

}  // namespace kvstream::codec
