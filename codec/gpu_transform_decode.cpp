#include "codec/gpu_transform_decode.h"

#include <stdexcept>
#include <utility>

#include "codec/bitstream.h"
#include "codec/bitstream_error.h"
#include "codec/byte_io.h"
#include "codec/cuda/gpu_transform_decode_kernels.h"
#include "codec/decoded_values.h"
#include "codec/rope.h"
#include "codec/transform_payload.h"

namespace kvstream::codec {

GpuDecoded gpu_decode_transform(std::span<const uint8_t> bitstream, const DecodeContext& context) {
  const ParsedBitstream parsed = parse_bitstream(bitstream);
  if (parsed.header.codec != CodecId::kTransform)
    throw std::runtime_error("gpu_decode_transform takes transform bitstreams (codec id 6), not codec id " +
                             std::to_string(static_cast<int>(parsed.header.codec)));
  const TransformPayload p = parse_transform_payload(parsed, context);
  const TransformCalibration& cal = *p.cal;
  const KvShape& s = p.shape;
  const int rows = s.rows(), channels = s.channels();

  // The calibration's arrays for this distortion, packed: kept components' classes and bases.
  std::vector<int> kept(size_t(rows), 0);
  std::vector<double> step(static_cast<size_t>(rows));
  std::vector<uint8_t> classes(size_t(rows) * size_t(channels), 0);
  std::vector<uint64_t> symbol_start(1, 0), basis_start;
  std::vector<float> mean, basis;
  for (int r = 0; r < rows; ++r) {
    const TransformRowPlan& plan = p.rows[size_t(r)];
    kept[size_t(r)] = plan.kept();
    step[size_t(r)] = plan.step;
    for (int i = 0; i < plan.kept(); ++i) classes[size_t(r) * size_t(channels) + size_t(i)] = uint8_t(plan.classes[size_t(i)]);
    symbol_start.push_back(symbol_start.back() + p.row_symbols(r));
    const auto& row = cal.row(r);
    mean.insert(mean.end(), row.mean.begin(), row.mean.end());
    basis_start.push_back(basis.size());
    basis.insert(basis.end(), row.basis.begin(), row.basis.begin() + int64_t(plan.kept()) * channels);
  }
  std::vector<uint16_t> class_cdf;
  for (int part = 0; part < 2; ++part)
    class_cdf.insert(class_cdf.end(), cal.cdf(part, 0), cal.cdf(part, 0) + kTransformClasses * (kTransformAlphabet + 1));
  std::vector<uint16_t> sink(p.sink.size() / 2);
  for (size_t i = 0; i < sink.size(); ++i) sink[i] = load_u16(p.sink.data() + 2 * i);
  const RopeAngles angles(cal.rope(), s.head_dim, p.t0, s.tokens);

  GpuTransformDecodeJob job;
  job.layers = s.layers;
  job.kv_heads = s.kv_heads;
  job.head_dim = s.head_dim;
  job.tokens = s.tokens;
  job.sinks = p.sinks;
  job.rope_pairs = static_cast<int>(cal.rope().pairs);
  job.rope_cos = angles.cos_table().data();
  job.rope_sin = angles.sin_table().data();
  job.kept = kept.data();
  job.step = step.data();
  job.classes = classes.data();
  job.class_cdf = class_cdf.data();
  job.symbol_start = symbol_start.data();
  job.rans = p.rans.data();
  job.rans_bytes = p.rans.size();
  job.group_offset = p.group_offset.data();
  job.low_bits = p.low_bits.data();
  job.low_bits_bytes = p.low_bits.size();
  job.escapes = p.escapes.data();
  job.escape_count = p.escape_count();
  job.sink = sink.data();
  job.mean = mean.data();
  job.basis = basis.data();
  job.basis_start = basis_start.data();

  GpuTransformDecodeResult result;
  std::string error;
  if (!gpu_transform_decode_chunk(job, result, error)) throw std::runtime_error("GPU decode: " + error);
  if (result.corrupt) throw BitstreamError(BitstreamErrorKind::kCorruptPayload, "RANS", "a row's rANS group is corrupt");
  p.check_totals(result.low_bits_used, result.escapes_used);
  if (result.bad_escape) throw BitstreamError(BitstreamErrorKind::kCorruptPayload, "ESCP", "escaped value out of range");
  KvCache kv(s, std::move(result.values));
  if (context.strict) check_decoded_values(kv, parsed.header.source_dtype);
  return {std::move(kv), result.entropy_ms, result.dequantize_ms, result.copy_ms, result.device};
}

}  // namespace kvstream::codec
