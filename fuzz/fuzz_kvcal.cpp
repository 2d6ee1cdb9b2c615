// Fuzzes the reader of transform calibrations, .kvcal files (codec/transform/transform_calibration.h,
// codec/FORMAT.md "Transform calibration"): TransformCalibration::load on the input as a file; then
// what a loaded calibration promises. It serializes to exactly the bytes read (no field lost or
// invented), and as the transform codec's calibration it encodes a small synthetic chunk of its
// shape (one chunk over its sink tokens, one after them) at its lowest and highest level and decodes
// it again to finite values.
// Input: one selector byte, then the file. An even selector repairs the file's trailing CRC32C
// (checksum_repair.h) so that mutations reach the fields behind it; an odd one leaves it.
// A finding: anything but a calibration or a documented rejection (fuzz_support.h; the encoder's
// refusal of a coefficient beyond the format's range is one), a calibration that serializes to other
// bytes, or a non-finite decoded value.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "codec/codec.h"
#include "codec/transform/transform_calibration.h"
#include "fuzz/checksum_repair.h"
#include "fuzz/fuzz_support.h"

namespace {

using namespace kvstream;

// Encoding is only tried on small shapes, so that one input stays within libFuzzer's time.
constexpr int64_t kMaxEncodedValues = 1 << 15;

void encode_and_decode(const codec::Codec& codec, const codec::TransformCalibration& cal, int level, int64_t t0,
                       int64_t tokens) {
  codec::KvCache kv(codec::KvShape{.layers = cal.layers(), .kv_heads = cal.kv_heads(), .head_dim = cal.head_dim(),
                                   .tokens = tokens});
  for (size_t i = 0; i < kv.values().size(); ++i) kv.values()[i] = float(std::sin(0.61 * double(i)) * (1 + i % 5));
  const auto bits = codec.encode(kv.all(), level, t0);
  const auto decoded = codec::decode_bitstream(bits, codec.decode_context());
  for (const float v : decoded.kv.values())
    if (!std::isfinite(v)) fuzz::report_finding("a calibration that loaded decodes a value to " + std::to_string(v));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  std::vector<uint8_t> bytes(data + 1, data + size);
  if (data[0] % 2 == 0 && bytes.size() >= 4) fuzz::repair_crc32c(bytes, 0, bytes.size() - 4);
  const auto& path = fuzz::write_input_file("kvcal", bytes.data(), bytes.size());
  fuzz::expect_clean_rejection([&] {
    const auto cal = codec::TransformCalibration::load(path);
    if (cal.serialize() != bytes) fuzz::report_finding("a calibration that loaded serializes to other bytes");
    if (int64_t(2) * cal.layers() * cal.channels() * 4 > kMaxEncodedValues) return;
    const auto codec = codec::make_codec("transform:cal=" + path.string());
    const int sinks = cal.sink_tokens();
    for (const int level : {1, int(cal.level_distortions().size())}) {
      fuzz::expect_clean_rejection([&] { encode_and_decode(*codec, cal, level, 0, std::min(sinks, 2) + 2); });
      fuzz::expect_clean_rejection([&] { encode_and_decode(*codec, cal, level, sinks, 2); });
    }
  });
  return 0;
}
