// The KV a quality measurement compares: the model's KV rounded to fp16 (the wire dtype: the
// reference) and the same KV encoded and decoded by a codec, both as codec input and as model state;
// and greedy continuations after either. Shared by the text-window and task modes of
// `kvstream quality` (eval/text_quality.h, eval/task_quality.h).
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "codec/codec_levels.h"
#include "codec/kv_cache.h"
#include "models/llama_model.h"

namespace kvstream::eval {

// The model's KV rounded to fp16 (the wire dtype), as a codec input and as model state: the
// reference every decoded KV is compared with.
struct ReferenceKv {
  codec::KvCache cache;
  models::KvState state;
};
ReferenceKv fp16_reference(const models::LlamaModel& model, const models::KvState& kv);

// `reference` encoded as one chunk at `level` and decoded again: the bitstream size and the decoded
// KV as model state.
struct DecodedKv {
  uint64_t bytes = 0;
  models::KvState state;
};
DecodedKv encode_decode(const codec::CodecLevel& codec_level, const codec::KvCache& reference, const models::LlamaModel& model);

// What every quality row says of its (codec, level) besides quality: the bytes of its bitstreams and
// of the same KV in fp16, summed over the contexts or records.
struct CodecLevelBytes {
  std::string codec;  // the codec's canonical spec
  int level = 1;
  uint64_t bytes = 0, fp16_bytes = 0;
  nlohmann::json to_json() const;  // codec, level, bytes, ratio_vs_fp16
};

// Greedy continuation: feeds `first` after `kv`, then each argmax, `steps` tokens in all. With
// `stop` >= 0, ends early when `stop` is produced (it is not included).
std::vector<int32_t> greedy_after(const models::LlamaModel& model, const models::KvState& kv, int32_t first, int steps,
                                  int32_t stop = -1);

}  // namespace kvstream::eval
