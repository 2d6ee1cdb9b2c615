#include "emulation/model/model_job_runner.h"

#include <stdexcept>
#include <string>

#include "codec/format/byte_io.h"
#include "eval/kv_bridge.h"

namespace kvstream::emulation {

namespace {

std::string where(const sim::GpuJob& job) {
  return "request " + std::to_string(job.request) + ", chunk " + std::to_string(job.chunk);
}

}  // namespace

ModelJobRunner::ModelJobRunner(const ClientContext& context, ReceivedChunks& received)
    : context_(context), received_(received) {
  decode_lane_.thread = std::thread([this] { work(decode_lane_); });
  model_lane_.thread = std::thread([this] { work(model_lane_); });
}

ModelJobRunner::~ModelJobRunner() {
  stop();
  decode_lane_.thread.join();
  model_lane_.thread.join();
}

void ModelJobRunner::start(const sim::GpuJob& job, Finished finished) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    Lane& lane = job.kind == sim::GpuJob::Kind::kDecode ? decode_lane_ : model_lane_;
    lane.jobs.emplace_back(job, std::move(finished));
  }
  changed_.notify_all();
}

void ModelJobRunner::stop() {
  std::unique_lock<std::mutex> lock(mutex_);
  stopping_ = true;
  decode_lane_.jobs.clear();
  model_lane_.jobs.clear();
  changed_.notify_all();
  changed_.wait(lock, [&] { return !decode_lane_.busy && !model_lane_.busy; });
}

eval::ContinuationScores ModelJobRunner::scores(size_t request) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = scores_.find(request);
  if (it == scores_.end()) {
    const auto error = score_errors_.find(request);
    throw std::runtime_error("request " + std::to_string(request) + " has no quality score" +
                             (error == score_errors_.end() ? " (its query was not prefilled)" : ": " + error->second));
  }
  return it->second;
}

void ModelJobRunner::work(Lane& lane) {
  torch::NoGradGuard no_grad;  // per thread
  while (true) {
    std::pair<sim::GpuJob, Finished> next;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      changed_.wait(lock, [&] { return stopping_ || !lane.jobs.empty(); });
      if (stopping_) return;
      next = std::move(lane.jobs.front());
      lane.jobs.pop_front();
      lane.busy = true;
    }
    std::exception_ptr error;
    std::function<void()> after;
    try {
      after = run(next.first);
    } catch (...) {
      error = std::current_exception();
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!stopping_) next.second(error);  // under the lock: stop() cannot return in between
    }
    if (after) after();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      lane.busy = false;
    }
    changed_.notify_all();
  }
}

std::function<void()> ModelJobRunner::run(const sim::GpuJob& job) {
  switch (job.kind) {
    case sim::GpuJob::Kind::kDecode:
      decode(job);
      return {};
    case sim::GpuJob::Kind::kRecompute:
      recompute(job);
      return {};
    case sim::GpuJob::Kind::kQueryPrefill:
      return prefill_query(job);
  }
  throw std::logic_error("unknown job kind");
}

void ModelJobRunner::decode(const sim::GpuJob& job) {
  const std::vector<uint8_t> bytes = received_.take(job.request, job.chunk);
  if (job.choice < 0 || size_t(job.choice) >= context_.decode_contexts.size())
    throw std::logic_error(where(job) + ": no level " + std::to_string(job.choice));
  codec::DecodedChunk decoded;
  try {
    decoded = codec::decode_bitstream(bytes, context_.decode_contexts[size_t(job.choice)]);
  } catch (const std::exception& e) {
    throw std::runtime_error(where(job) + ": the received bitstream does not decode: " + e.what());
  }
  const auto [t0, t1] = context_.chunk_ranges.at(job.chunk);
  if (decoded.kv.shape().tokens != t1 - t0)
    throw std::runtime_error(where(job) + ": the received bitstream decoded to " + decoded.kv.shape().to_string() +
                             ", the chunk has " + std::to_string(t1 - t0) + " tokens");
  // Into the model's layout, as a decoder writes a chunk into the KV cache: part of the decode.
  put_chunk(job.request, job.chunk, eval::to_kv_state(decoded.kv, context_.model->config(), context_.model->device()));
}

void ModelJobRunner::recompute(const sim::GpuJob& job) {
  const std::vector<uint8_t> bytes = received_.take(job.request, job.chunk);
  const auto [t0, t1] = context_.chunk_ranges.at(job.chunk);
  if (bytes.size() != 4 * size_t(t1 - t0))
    throw std::runtime_error(where(job) + ": received " + std::to_string(bytes.size()) + " bytes of text, expected " +
                             std::to_string(4 * (t1 - t0)) + " (uint32 token ids)");
  std::vector<int32_t> ids(size_t(t1 - t0));
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = int32_t(codec::load_u32(bytes.data() + 4 * i));
  const models::KvState prefix = prefix_state(job.request, job.chunk);
  models::KvState kv;  // prefix + this chunk
  context_.model->forward(ids, prefix, &kv, /*last_logits_only=*/true);
  models::KvState chunk;  // tokens [t0, t1) of every layer, [heads, tokens, head_dim]
  for (size_t l = 0; l < kv.keys.size(); ++l) {
    chunk.keys.push_back(kv.keys[l].slice(1, t0, t1).clone());
    chunk.values.push_back(kv.values[l].slice(1, t0, t1).clone());
  }
  put_chunk(job.request, job.chunk, std::move(chunk));
}

std::function<void()> ModelJobRunner::prefill_query(const sim::GpuJob& job) {
  const models::KvState state = prefix_state(job.request, context_.chunk_ranges.size());
  torch::Tensor log_probs = eval::next_token_log_probs(*context_.model, context_.query_ids, state);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    kv_.erase(job.request);
  }
  return [this, request = job.request, log_probs = std::move(log_probs)] {
    std::string error;
    eval::ContinuationScores scores;
    try {
      scores = eval::score_continuation(context_.reference_log_probs, log_probs, context_.targets);
    } catch (const std::exception& e) {
      error = e.what();
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (error.empty())
      scores_[request] = scores;
    else
      score_errors_[request] = error;
  };
}

models::KvState ModelJobRunner::prefix_state(size_t request, size_t chunks) {
  if (chunks == 0) return {};
  std::vector<models::KvState> parts;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = kv_.find(request);
    for (size_t c = 0; c < chunks; ++c) {
      if (it == kv_.end() || it->second[c].keys.empty())
        throw std::logic_error("request " + std::to_string(request) + ": chunk " + std::to_string(c) +
                               " is not ready before the job that needs it");
      parts.push_back(it->second[c]);  // shares the tensors
    }
  }
  models::KvState state;
  for (size_t l = 0; l < parts.front().keys.size(); ++l) {
    std::vector<torch::Tensor> keys, values;
    for (const auto& part : parts) {
      keys.push_back(part.keys[l]);
      values.push_back(part.values[l]);
    }
    state.keys.push_back(torch::cat(keys, 1));
    state.values.push_back(torch::cat(values, 1));
  }
  return state;
}

void ModelJobRunner::put_chunk(size_t request, size_t chunk, models::KvState kv) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto& chunks = kv_[request];
  chunks.resize(context_.chunk_ranges.size());
  chunks[chunk] = std::move(kv);
}

}  // namespace kvstream::emulation
