#include "codec/transform/gpu_transform_encode.h"

#include <stdexcept>
#include <utility>

#include "codec/format/bitstream.h"
#include "codec/transform/gpu_transform_kernels.h"
#include "codec/transform/gpu_transform_model.h"
#include "codec/transform/transform_payload.h"

namespace kvstream::codec {

GpuEncoded gpu_encode_transform(const TransformCalibration& cal, double d, int sub_tokens, const KvChunkView& chunk,
                                int64_t t0, SourceDtype dtype) {
  const KvShape s = chunk.shape();
  check_transform_shape(cal, s, "the chunk");
  if (!(d > 0 && d <= 1)) throw std::invalid_argument("distortion " + std::to_string(d) + " not in (0, 1]");
  const int sinks = transform_sinks_in_chunk(cal, t0, s.tokens);
  for (int r = 0; r < s.rows(); ++r)
    for (int64_t t = sinks; t < s.tokens; ++t) check_transform_token_finite(chunk.token(r, t), s.channels(), r, s.layers, t0 + t);
  TransformSections sections;
  sections.sink = transform_sink_bytes(chunk, sinks);
  std::vector<TransformRowPlan> plans;
  for (int r = 0; r < s.rows(); ++r) plans.emplace_back(cal, r, d, sub_tokens);
  const PackedTransformModel model(cal, plans, transform_groups(plans, s.tokens - sinks, /*one_per_row=*/false), s, t0,
                                   sinks);

  GpuTransformEncodeJob job;
  job.model = model.view();
  job.kv = chunk.base();
  job.kv_tokens = chunk.full_tokens();
  job.kv_t0 = chunk.t0();
  GpuTransformEncodeResult result;
  std::string error;
  if (!gpu_transform_encode_chunk(job, result, error)) throw std::runtime_error("GPU encode: " + error);
  sections.group_bytes = std::move(result.group_bytes);
  sections.rans = std::move(result.rans);
  sections.low_bits = std::move(result.low_bits);
  sections.escapes = std::move(result.escapes);

  return {static_cast<const GpuEncodeTimes&>(result),
          write_transform_bitstream({CodecId::kTransform, s, t0, dtype}, cal, d, sinks, plans, std::move(sections))};
}

}  // namespace kvstream::codec
