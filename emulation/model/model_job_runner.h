// The executors' jobs of `kvstream emulate --model`, done for real on the CPU (sim/executor.h,
// docs/EMULATION.md "Real KV"):
//   decode     the bitstream the request's connection received, by the real decoder (codec/codec.h);
//   recompute  the model over the chunk's received token ids, after the KV of the chunks before it
//              (all done: the streamer submits a text chunk only then), as CacheGen recomputes a
//              text chunk with the cached prefix (docs/CACHEGEN.md §11.1);
//   query      the query's tokens after the request's whole KV: its first token is the TTFT's end.
//              After the job is done (outside its time), its next-token predictions are scored
//              against those after the fp16 reference KV: the request's measured quality.
// Decode jobs run on one thread and model jobs on another, so that decode and prefill overlap
// exactly when the executors let them (SimConfig::overlap_decode_prefill).
#pragma once
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "codec/codec.h"
#include "emulation/chunk_payloads.h"
#include "eval/metrics.h"
#include "models/llama_model.h"
#include "sim/executor.h"

namespace kvstream::emulation {

// What the client knows of the context before any chunk arrives.
struct ClientContext {
  const models::LlamaModel* model = nullptr;
  std::vector<std::pair<int64_t, int64_t>> chunk_ranges;  // token range of each chunk
  std::vector<codec::DecodeContext> decode_contexts;      // per profile level
  std::vector<int32_t> query_ids;                         // fed after the context's KV
  std::vector<int32_t> targets;                           // what each query position predicts
  torch::Tensor reference_log_probs;                      // after the fp16 reference KV, [query, vocab]
};

class ModelJobRunner final : public sim::JobRunner {
 public:
  ModelJobRunner(const ClientContext& context, ReceivedChunks& received);
  ~ModelJobRunner() override;  // stops and joins the threads
  ModelJobRunner(const ModelJobRunner&) = delete;
  ModelJobRunner& operator=(const ModelJobRunner&) = delete;

  void start(const sim::GpuJob& job, Finished finished) override;
  void stop() override;

  // The scores of `request`'s query; throws std::runtime_error before its query job ran or when
  // scoring failed.
  eval::ContinuationScores scores(size_t request) const;

 private:
  struct Lane {
    std::deque<std::pair<sim::GpuJob, Finished>> jobs;
    bool busy = false;
    std::thread thread;
  };
  void work(Lane& lane);
  // Does `job`; returns what is left to do once it counts as finished (the query's scoring).
  std::function<void()> run(const sim::GpuJob& job);
  void decode(const sim::GpuJob& job);
  void recompute(const sim::GpuJob& job);
  std::function<void()> prefill_query(const sim::GpuJob& job);
  // The request's KV of chunks [0, chunks), as model state.
  models::KvState prefix_state(size_t request, size_t chunks);
  void put_chunk(size_t request, size_t chunk, models::KvState kv);

  const ClientContext& context_;
  ReceivedChunks& received_;
  mutable std::mutex mutex_;  // guards everything below
  std::condition_variable changed_;
  bool stopping_ = false;
  Lane decode_lane_, model_lane_;
  // Per request in flight: its chunks' KV in the model's layout, once done.
  std::map<size_t, std::vector<models::KvState>> kv_;
  std::map<size_t, eval::ContinuationScores> scores_;
  std::map<size_t, std::string> score_errors_;
};

}  // namespace kvstream::emulation
