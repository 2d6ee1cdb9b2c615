// The client's real work in `emulate --model` (emulation/model/model_job_runner.h), without a
// network: jobs on bytes put where a connection would leave them. Recompute and query prefill on
// stories260K reproduce a plain prefill's predictions; received bytes that are not what the chunk
// needs end the job with an error that names the request, the chunk and what was wrong.
#include <gtest/gtest.h>

#include <future>

#include "codec/codec.h"
#include "emulation/model/model_job_runner.h"
#include "eval/kv_bridge.h"
#include "models/model_catalog.h"

namespace kvstream::emulation {
namespace {

using Kind = sim::GpuJob::Kind;

struct Fixture {
  models::LoadedModel m = models::load_model("stories260K");
  std::vector<int32_t> ids = m.tokenizer->encode("Once upon a time there was a little dog. It liked to run in the park.", true);
  ClientContext context;
  ReceivedChunks received;

  explicit Fixture(int64_t chunk_tokens) {
    torch::NoGradGuard no_grad;
    context.model = m.model.get();
    context.chunk_ranges = codec::chunk_ranges(int64_t(ids.size()), chunk_tokens);
    context.decode_contexts = {codec::DecodeContext{}};
    context.query_ids = {ids.back()};
    context.targets = {0};
    models::KvState kv;
    m.model->forward(ids, {}, &kv, true);
    context.reference_log_probs = eval::next_token_log_probs(*m.model, context.query_ids, kv);
  }
  std::vector<uint8_t> text_bytes(int64_t t0, int64_t t1) const {
    std::vector<uint8_t> bytes;
    for (int64_t t = t0; t < t1; ++t)
      for (int shift = 0; shift < 32; shift += 8) bytes.push_back(uint8_t(uint32_t(ids[size_t(t)]) >> shift));
    return bytes;
  }
};

// Runs one job and returns its error message ("" when it succeeded).
std::string run_job(ModelJobRunner& runner, const sim::GpuJob& job) {
  std::promise<std::string> outcome;
  runner.start(job, [&](std::exception_ptr error) {
    std::string what;
    if (error) try {
        std::rethrow_exception(error);
      } catch (const std::exception& e) {
        what = e.what();
      }
    outcome.set_value(what);
  });
  return outcome.get_future().get();
}

TEST(ModelJobRunner, RecomputedChunksAndTheQueryGiveThePlainPrefillsPredictions) {
  Fixture f(8);
  ModelJobRunner runner(f.context, f.received);
  for (size_t c = 0; c < f.context.chunk_ranges.size(); ++c) {
    const auto [t0, t1] = f.context.chunk_ranges[c];
    f.received.put(0, c, f.text_bytes(t0, t1));
    ASSERT_EQ(run_job(runner, {Kind::kRecompute, 0, c, -1, 0}), "");
  }
  ASSERT_EQ(run_job(runner, {Kind::kQueryPrefill, 0, 0, 0, 0}), "");
  runner.stop();  // the query's scoring ends after its job
  EXPECT_EQ(runner.scores(0).top1_agree, 1.0);
  EXPECT_NEAR(runner.scores(0).kl_mean, 0.0, 1e-6);
}

TEST(ModelJobRunner, BadReceivedBytesEndTheJobWithTheirRequestAndChunk) {
  Fixture f(8);
  ModelJobRunner runner(f.context, f.received);
  f.received.put(2, 0, {1, 2, 3});
  EXPECT_EQ(run_job(runner, {Kind::kRecompute, 2, 0, -1, 0}),
            "request 2, chunk 0: received 3 bytes of text, expected 32 (uint32 token ids)");
  f.received.put(2, 1, std::vector<uint8_t>(64, 0x5a));
  EXPECT_NE(run_job(runner, {Kind::kDecode, 2, 1, 0, 0}).find("request 2, chunk 1: the received bitstream does not decode: "),
            std::string::npos);
  // A valid bitstream of the wrong chunk: 3 tokens where chunk 0 has 8.
  const codec::KvCache kv(codec::KvShape{f.m.model->config().n_layers, f.m.model->config().n_kv_heads,
                                         f.m.model->config().head_dim(), 3});
  f.received.put(2, 0, codec::make_codec("fp16")->encode(kv.all(), 1, 0));
  EXPECT_NE(run_job(runner, {Kind::kDecode, 2, 0, 0, 0}).find("the chunk has 8 tokens"), std::string::npos);
  EXPECT_NE(run_job(runner, {Kind::kQueryPrefill, 3, 0, 0, 0}).find("request 3: chunk 0 is not ready"), std::string::npos);
  runner.stop();
  EXPECT_THROW(runner.scores(3), std::runtime_error);
}

}  // namespace
}  // namespace kvstream::emulation
