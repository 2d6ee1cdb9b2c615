#include "codec/cachegen/gpu_decode.h"

#include <stdexcept>
#include <utility>

#include "codec/cachegen/cachegen_payload.h"
#include "codec/cachegen/cachegen_quantizer.h"
#include "codec/cachegen/gpu_decode_kernels.h"
#include "codec/decoded_values.h"
#include "codec/format/bitstream.h"
#include "codec/format/bitstream_error.h"

namespace kvstream::codec {

GpuDecoded gpu_decode_cachegen(std::span<const uint8_t> bitstream, const DecodeContext& context) {
  const ParsedBitstream parsed = parse_bitstream(bitstream);
  if (parsed.header.codec != CodecId::kCacheGen)
    throw std::runtime_error("the GPU decoder takes cachegen bitstreams (codec id 5), not codec id " +
                             std::to_string(static_cast<int>(parsed.header.codec)));
  const CacheGenPayload payload = parse_cachegen_payload(parsed, context);
  const std::vector<uint8_t> row_q = row_q_values(payload.params.spec, payload.rows());

  GpuDecodeJob job;
  job.rans = payload.params.coder == kCoderRans;
  job.layers = payload.shape.layers;
  job.channels = payload.shape.channels();
  job.alphabet = payload.params.alphabet;
  job.sub_tokens = payload.params.sub_tokens;
  job.rans_states = payload.params.rans_states;
  job.delta_group = payload.params.mode.delta_group;
  job.tokens = payload.shape.tokens;
  job.cdf = payload.cdf.data();
  job.scales = payload.scales.data();
  job.row_q = row_q.data();
  job.data = payload.data.data();
  job.data_bytes = payload.data.size();
  job.offset = payload.offset.data();
  job.units = payload.offset.size() - 1;
  job.ac_codes = payload.ac_codes.data();

  GpuDecodeResult result;
  std::string error;
  if (!gpu_decode_chunk(job, result, error)) throw std::runtime_error("GPU decode: " + error);
  if (result.corrupt)
    throw BitstreamError(BitstreamErrorKind::kCorruptPayload, "DATA", "a rANS group does not decode to its end state");
  check_symbols(payload, result.symbols);
  KvCache kv(payload.shape, std::move(result.values));
  if (context.strict) check_decoded_values(kv, parsed.header.source_dtype);
  return {static_cast<const GpuDecodeTimes&>(result), std::move(kv)};
}

}  // namespace kvstream::codec
