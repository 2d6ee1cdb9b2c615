#include "codec/transform/gpu_transform_decode.h"

#include <stdexcept>
#include <utility>

#include "codec/decoded_values.h"
#include "codec/format/bitstream.h"
#include "codec/format/bitstream_error.h"
#include "codec/format/byte_io.h"
#include "codec/transform/gpu_transform_kernels.h"
#include "codec/transform/gpu_transform_model.h"
#include "codec/transform/transform_payload.h"

namespace kvstream::codec {

GpuDecoded gpu_decode_transform(std::span<const uint8_t> bitstream, const DecodeContext& context) {
  const ParsedBitstream parsed = parse_bitstream(bitstream);
  if (parsed.header.codec != CodecId::kTransform)
    throw std::runtime_error("gpu_decode_transform takes transform bitstreams (codec id 6), not codec id " +
                             std::to_string(static_cast<int>(parsed.header.codec)));
  const TransformPayload p = parse_transform_payload(parsed, context);
  const PackedTransformModel model(*p.cal, p.rows, p.groups, p.shape, p.t0, p.sinks);
  std::vector<uint16_t> sink(p.sink.size() / 2);
  for (size_t i = 0; i < sink.size(); ++i) sink[i] = load_u16(p.sink.data() + 2 * i);

  GpuTransformDecodeJob job;
  job.model = model.view();
  job.rans = p.rans.data();
  job.rans_bytes = p.rans.size();
  job.group_offset = p.group_offset.data();
  job.low_bits = p.low_bits.data();
  job.low_bits_bytes = p.low_bits.size();
  job.escapes = p.escapes.data();
  job.escape_count = p.escape_count();
  job.sink = sink.data();

  GpuTransformDecodeResult result;
  std::string error;
  if (!gpu_transform_decode_chunk(job, result, error)) throw std::runtime_error("GPU decode: " + error);
  if (result.corrupt) throw BitstreamError(BitstreamErrorKind::kCorruptPayload, "RANS", "a rANS group is corrupt");
  p.check_totals(result.low_bits_used, result.escapes_used);
  if (result.bad_escape) throw BitstreamError(BitstreamErrorKind::kCorruptPayload, "ESCP", "escaped value out of range");
  KvCache kv(p.shape, std::move(result.values));
  if (context.strict) check_decoded_values(kv, parsed.header.source_dtype);
  return {static_cast<const GpuDecodeTimes&>(result), std::move(kv)};
}

}  // namespace kvstream::codec
