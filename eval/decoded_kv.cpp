#include "eval/decoded_kv.h"

#include "common/half.h"
#include "eval/kv_bridge.h"

namespace kvstream::eval {

nlohmann::json CodecLevelBytes::to_json() const {
  return {{"codec", codec}, {"level", level}, {"bytes", bytes}, {"ratio_vs_fp16", double(fp16_bytes) / double(bytes)}};
}

ReferenceKv fp16_reference(const models::LlamaModel& model, const models::KvState& kv) {
  ReferenceKv r;
  r.cache = to_kv_cache(kv, model.config());
  for (float& v : r.cache.values()) v = common::round_to_half(v);
  r.state = to_kv_state(r.cache, model.config(), model.device());
  return r;
}

DecodedKv encode_decode(const codec::CodecLevel& codec_level, const codec::KvCache& reference, const models::LlamaModel& model) {
  const auto bits = codec_level.codec->encode(reference.all(), codec_level.level, 0);
  return {bits.size(), to_kv_state(codec::decode_bitstream(bits, codec_level.codec->decode_context()).kv, model.config(), model.device())};
}

std::vector<int32_t> greedy_after(const models::LlamaModel& model, const models::KvState& kv, int32_t first, int steps,
                                  int32_t stop) {
  std::vector<int32_t> out;
  models::KvState state = kv;
  int32_t token = first;
  for (int i = 0; i < steps; ++i) {
    models::KvState next;
    const auto logits = model.forward({token}, state, &next, true);
    token = static_cast<int32_t>(logits[-1].argmax().item<int64_t>());
    if (token == stop) break;
    out.push_back(token);
    state = std::move(next);
  }
  return out;
}

}  // namespace kvstream::eval
