#include "codec/cachegen/gpu_encode.h"

#include <stdexcept>
#include <utility>

#include "codec/cachegen/cachegen_payload.h"
#include "codec/cachegen/cachegen_quantizer.h"
#include "codec/cachegen/gpu_encode_kernels.h"
#include "codec/format/bitstream.h"

namespace kvstream::codec {

GpuEncoded gpu_encode_cachegen(const std::string& spec, const KvChunkView& chunk, int level, int64_t t0,
                               SourceDtype dtype, std::shared_ptr<const OfflineCdfTable> table) {
  const KvShape shape = chunk.shape();
  CacheGenEncodePlan plan = plan_cachegen_encode(spec, shape, level, std::move(table));
  const CacheGenParams& p = plan.params;
  const std::vector<uint8_t> row_q = row_q_values(p.spec, shape.rows());
  CacheGenEncodeJob job = encode_job(chunk, row_q.data(), p);
  const bool chunk_cdf = p.cdf_source == CdfSource::kChunk;
  job.cdf = plan.offline_cdf.data();

  GpuEncodeResult r;
  std::string error;
  if (!gpu_encode_chunk(job, chunk_cdf, r, error)) throw std::runtime_error("GPU encode: " + error);
  if (r.bad_token >= 0) throw non_finite_token_error(job, uint64_t(r.bad_token), r.bad_channel);
  return {static_cast<const GpuEncodeTimes&>(r),
          write_cachegen_bitstream({CodecId::kCacheGen, shape, t0, dtype}, p, r.scales,
                                   chunk_cdf ? r.cdf : plan.offline_cdf, r.unit_bytes, r.ac_codes, std::move(r.data))};
}

}  // namespace kvstream::codec
