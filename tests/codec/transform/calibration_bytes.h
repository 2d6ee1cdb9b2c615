// A .kvcal file's bytes for tests to bend (codec/FORMAT.md §7): read or write a float at a byte
// offset, then parse the bytes again, their CRC repaired, to see what reading refuses.
#pragma once
#include <bit>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "codec/transform/transform_calibration.h"
#include "tests/test_support.h"

namespace kvstream::codec::test_support_transform {

struct CalibrationBytes {
  std::vector<uint8_t> bytes;

  void put_f32(size_t at, float v) {
    const auto u = std::bit_cast<uint32_t>(v);
    for (int b = 0; b < 4; ++b) bytes[at + size_t(b)] = uint8_t(u >> (8 * b));
  }
  float get_f32(size_t at) const {
    uint32_t u = 0;
    for (int b = 0; b < 4; ++b) u |= uint32_t(bytes[at + size_t(b)]) << (8 * b);
    return std::bit_cast<float>(u);
  }
  // What TransformCalibration::parse says of the bytes (as file "x.kvcal"), or "no error".
  std::string error() {
    test_support::repair_crc(bytes);
    try {
      TransformCalibration::parse(bytes, "x.kvcal");
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "no error";
  }
};

}  // namespace kvstream::codec::test_support_transform
