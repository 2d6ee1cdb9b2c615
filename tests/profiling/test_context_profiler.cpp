// Context profiles measured on a real model (profiling/context_profiler.h): stories260K on
// TinyStories, T = 192 context tokens in chunks of 64, K = 32 continuation tokens, codecs cachegen
// (levels 1-3), quant:bits=8 and zstd. Checks the profile against the simulator's schema, the chunk
// layout, the codec costs (cachegen's ladder grows in bytes, zstd is lossless), the quality
// measurements, that chunked prefill gives the full-prefill KV, the text windows, the level-name
// rules and the errors. Skips when the model or the text has not been fetched.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "common/data_resolver.h"
#include "profiling/context_profiler.h"

namespace kvstream::profiling {
namespace {

constexpr const char* kModelFile = "models/stories260K/stories260K.bin";
constexpr const char* kText = "text/tinystories/tinystories_val.txt";
constexpr int kT = 192, kK = 32;
constexpr int64_t kChunk = 64;

bool have(const std::string& relative) {
  try {
    common::resolve_data(relative);
    return true;
  } catch (const common::DataNotFound&) {
    return false;
  }
}

const models::LoadedModel& stories() {
  static const models::LoadedModel model = models::load_model("stories260K");
  return model;
}

ProfilingOptions test_options() {
  ProfilingOptions o;
  o.chunk_tokens = kChunk;
  o.codecs = {"cachegen", "quant:bits=8", "zstd"};
  return o;
}

// The profile every test shares, measured once.
const MeasuredContext& measured() {
  static const MeasuredContext m = [] {
    const auto contexts = text_contexts(stories(), kText, 1, kT, kK, 3000);
    return profile_context(stories(), contexts.at(0), test_options());
  }();
  return m;
}

class ContextProfiler : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!have(kModelFile) || !have(kText)) GTEST_SKIP() << "stories260K or TinyStories not found: run scripts/fetch-data.sh";
  }
  static int level(const std::string& name) { return measured().profile.level_index(name); }
};

TEST_F(ContextProfiler, ProfileIsValidForTheSimulator) {
  const auto& p = measured().profile;
  EXPECT_EQ(p.name, "tinystories_val-0");
  EXPECT_EQ(p.model, "stories260K");
  EXPECT_EQ(p.chunk_tokens, kChunk);
  EXPECT_EQ(p.context_tokens(), kT);
  const sim::ContextProfile back = sim::context_profile_from_json(sim::to_json(p));
  EXPECT_EQ(sim::to_json(back), sim::to_json(p));
}

TEST_F(ContextProfiler, ChunksCoverTheContextInOrder) {
  const auto& p = measured().profile;
  ASSERT_EQ(p.chunks.size(), 3u);
  for (size_t c = 0; c < 3; ++c) {
    EXPECT_EQ(p.chunks[c].start_token, int64_t(c) * kChunk);
    EXPECT_EQ(p.chunks[c].tokens, kChunk);
    EXPECT_EQ(p.chunks[c].text_bytes, 4.0 * kChunk);  // uint32 token ids
    ASSERT_TRUE(p.chunks[c].recompute_s.has_value());
    EXPECT_GT(*p.chunks[c].recompute_s, 0);
    EXPECT_EQ(p.chunks[c].levels.size(), p.levels.size());
  }
}

TEST_F(ContextProfiler, LevelNamesFollowTheCodecSpecs) {
  const auto& m = measured();
  const std::vector<std::pair<std::string, std::string>> want = {{"cachegen:1", "cachegen"},
                                                                  {"cachegen:2", "cachegen"},
                                                                  {"cachegen:3", "cachegen"},
                                                                  {"quant:bits=8", "quant:bits=8"},
                                                                  {"zstd", "zstd"}};
  ASSERT_EQ(m.profile.levels.size(), want.size());
  ASSERT_EQ(m.levels.size(), want.size());
  for (size_t l = 0; l < want.size(); ++l) {
    EXPECT_EQ(m.profile.levels[l].name, want[l].first);
    EXPECT_EQ(m.profile.levels[l].codec, want[l].second);
    EXPECT_EQ(m.levels[l].level, want[l].first);
    EXPECT_EQ(m.levels[l].codec, want[l].second);
  }
}

TEST_F(ContextProfiler, BytesAndTimesAreMeasuredPerChunk) {
  const auto& m = measured();
  EXPECT_EQ(m.fp16_bytes_per_token, 2.0 * 5 * 4 * 8 * 2);  // stories260K: L=5, H=4, D=8
  for (size_t l = 0; l < m.levels.size(); ++l) {
    double bytes = 0, encode_s = 0, decode_s = 0;
    for (const auto& chunk : m.profile.chunks) {
      const auto& cost = chunk.levels[l];
      EXPECT_GT(cost.bytes, 0) << m.levels[l].level;
      EXPECT_GT(cost.encode_s, 0) << m.levels[l].level;
      EXPECT_GT(cost.decode_s, 0) << m.levels[l].level;
      bytes += cost.bytes;
      encode_s += cost.encode_s;
      decode_s += cost.decode_s;
    }
    EXPECT_EQ(m.levels[l].bytes, bytes);
    EXPECT_DOUBLE_EQ(m.levels[l].encode_s, encode_s);
    EXPECT_DOUBLE_EQ(m.levels[l].decode_s, decode_s);
    EXPECT_EQ(m.levels[l].fp16_bytes, kT * m.fp16_bytes_per_token);
    EXPECT_LT(m.levels[l].bytes, m.levels[l].fp16_bytes) << m.levels[l].level;
  }
  // CacheGen's ladder gives every layer at least as many bins at a higher level: more bytes.
  for (const auto& chunk : m.profile.chunks) {
    EXPECT_LT(chunk.levels[level("cachegen:1")].bytes, chunk.levels[level("cachegen:2")].bytes);
    EXPECT_LT(chunk.levels[level("cachegen:2")].bytes, chunk.levels[level("cachegen:3")].bytes);
  }
}

TEST_F(ContextProfiler, QualityIsTheWholeContextTop1Agreement) {
  const auto& m = measured();
  for (size_t l = 0; l < m.levels.size(); ++l) {
    const auto& lm = m.levels[l];
    EXPECT_GE(lm.top1_agree, 0);
    EXPECT_LE(lm.top1_agree, 1);
    EXPECT_GT(lm.ppl_ref, 1);
    EXPECT_GE(lm.kl_mean, -1e-9);
    for (const auto& chunk : m.profile.chunks) EXPECT_EQ(chunk.levels[l].quality, lm.top1_agree) << lm.level;
    // top1 over K - 1 = 31 positions
    EXPECT_NEAR(lm.top1_agree * (kK - 1), std::round(lm.top1_agree * (kK - 1)), 1e-9) << lm.level;
  }
  // zstd is lossless: the decoded KV is the reference.
  const auto& zstd = m.levels[size_t(level("zstd"))];
  EXPECT_EQ(zstd.top1_agree, 1.0);
  EXPECT_EQ(zstd.ppl, zstd.ppl_ref);
  EXPECT_EQ(zstd.kl_mean, 0.0);
  // 8-bit quantization is at least as good as CacheGen's coarsest level.
  EXPECT_GE(m.levels[size_t(level("quant:bits=8"))].top1_agree, m.levels[size_t(level("cachegen:1"))].top1_agree);
  EXPECT_LT(m.levels[size_t(level("cachegen:1"))].kl_mean, 1.0);
  const auto j = m.levels[0].to_json();
  for (const char* key : {"level", "codec", "bytes", "fp16_bytes", "ratio_vs_fp16", "top1_agree", "ppl_ref", "ppl",
                          "kl_mean", "encode_s", "decode_s"})
    EXPECT_TRUE(j.contains(key)) << key;
}

TEST_F(ContextProfiler, ChunkedPrefillEqualsFullPrefill) {
  const auto& model = *stories().model;
  const auto contexts = text_contexts(stories(), kText, 2, kT, kK, 3000);
  models::KvState full;
  model.forward(contexts[1].context_ids, {}, &full);
  for (int64_t chunk : {int64_t(64), int64_t(50), int64_t(1000)}) {  // even, ragged (last 42), one chunk
    const ChunkedPrefill chunked = chunked_prefill(model, contexts[1].context_ids, chunk);
    EXPECT_EQ(chunked.chunk_seconds.size(), size_t((kT + chunk - 1) / chunk));
    ASSERT_EQ(chunked.kv.tokens(), kT);
    ASSERT_EQ(chunked.kv.keys.size(), full.keys.size());
    for (size_t l = 0; l < full.keys.size(); ++l) {
      EXPECT_TRUE(torch::allclose(chunked.kv.keys[l], full.keys[l], 1e-4, 1e-5)) << "chunk " << chunk << " layer " << l;
      EXPECT_TRUE(torch::allclose(chunked.kv.values[l], full.values[l], 1e-4, 1e-5)) << "chunk " << chunk << " layer " << l;
    }
  }
}

TEST_F(ContextProfiler, RaggedLastChunk) {
  const auto contexts = text_contexts(stories(), kText, 1, 150, 8, 3000);
  ProfilingOptions o;
  o.chunk_tokens = 64;
  o.codecs = {"fp16"};
  const auto m = profile_context(stories(), contexts[0], o);
  ASSERT_EQ(m.profile.chunks.size(), 3u);
  EXPECT_EQ(m.profile.chunks[2].start_token, 128);
  EXPECT_EQ(m.profile.chunks[2].tokens, 22);
  EXPECT_EQ(m.profile.chunks[2].text_bytes, 88);
  EXPECT_NO_THROW(sim::context_profile_from_json(sim::to_json(m.profile)));
  EXPECT_EQ(m.profile.levels.at(0).name, "fp16");
  EXPECT_EQ(m.levels.at(0).top1_agree, 1.0);  // the reference is fp16 already
}

TEST_F(ContextProfiler, TextContextsStartAtLinesAndHaveTheRequestedLengths) {
  const auto contexts = text_contexts(stories(), kText, 3, kT, kK, 3000);
  ASSERT_EQ(contexts.size(), 3u);
  std::ifstream in(common::resolve_data(kText), std::ios::binary);
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  for (size_t i = 0; i < contexts.size(); ++i) {
    const auto& c = contexts[i];
    EXPECT_EQ(c.name, "tinystories_val-" + std::to_string(i));
    EXPECT_EQ(c.context_ids.size(), size_t(kT));
    EXPECT_EQ(c.continuation_ids.size(), size_t(kK));
    EXPECT_EQ(c.context_ids.front(), stories().tokenizer->bos_id());
    // The context is the text from a line start at or after 3000·i.
    std::string head = stories().tokenizer->decode({c.context_ids.begin() + 1, c.context_ids.begin() + 20});
    head.erase(0, head.find_first_not_of(' '));  // SentencePiece's dummy prefix space
    ASSERT_FALSE(head.empty());
    const size_t found = text.find(head, i * 3000);
    ASSERT_NE(found, std::string::npos) << head;
    EXPECT_TRUE(found == 0 || text[found - 1] == '\n') << head;
    EXPECT_LT(found, i * 3000 + 2000) << head;
  }
  EXPECT_NE(contexts[0].context_ids, contexts[1].context_ids);
  // Deterministic.
  EXPECT_EQ(text_contexts(stories(), kText, 3, kT, kK, 3000)[2].context_ids, contexts[2].context_ids);
}

TEST_F(ContextProfiler, TextContextErrors) {
  const auto& m = stories();
  // The text (about 477k characters) runs out before context 5 starts: the message names the file.
  try {
    text_contexts(m, kText, 6, kT, kK, 100000);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("tinystories_val.txt"), std::string::npos) << e.what();
  }
  // The last context starts 200 characters before the end: too few for 224 tokens.
  std::ifstream in(common::resolve_data(kText), std::ios::binary);
  const int64_t size = int64_t(std::string{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()}.size());
  EXPECT_THROW(text_contexts(m, kText, 2, kT, kK, size - 200), std::invalid_argument);
  EXPECT_THROW(text_contexts(m, kText, 1, 500, kK, 3000), std::invalid_argument);  // 532 > max_seq_len 512
  EXPECT_THROW(text_contexts(m, kText, 1, kT, 1, 3000), std::invalid_argument);    // K < 2
  EXPECT_THROW(text_contexts(m, kText, 0, kT, kK, 3000), std::invalid_argument);
  EXPECT_THROW(text_contexts(m, "text/no-such-file.txt", 1, kT, kK, 3000), common::DataNotFound);
}

TEST_F(ContextProfiler, LevelNameRules) {
  ProfilingOptions o;
  o.codecs = {"cachegen:delta", "kivi:bits=2", "quant:bits=8", "cachegen", "zstd"};
  o.levels = {2};  // filters ladder levels only
  const auto levels = profile_levels(o);
  const std::vector<std::pair<std::string, std::string>> want = {{"cachegen:delta:2", "cachegen:delta"},
                                                                  {"kivi:bits=2", "kivi:bits=2"},
                                                                  {"quant:bits=8", "quant:bits=8"},
                                                                  {"cachegen:2", "cachegen"},
                                                                  {"zstd", "zstd"}};
  ASSERT_EQ(levels.size(), want.size());
  for (size_t l = 0; l < want.size(); ++l) {
    EXPECT_EQ(levels[l].name, want[l].first);
    EXPECT_EQ(levels[l].codec, want[l].second);
  }
  o.codecs = {"cachegen", "quant:bits=8", "cachegen"};
  o.levels = {};
  EXPECT_THROW(profile_levels(o), std::invalid_argument);  // cachegen:1 twice
  o.codecs = {"quant:bits=8", "quant:bits=8"};
  EXPECT_THROW(profile_levels(o), std::invalid_argument);
  o.codecs = {"cachegen"};
  o.levels = {7};
  EXPECT_THROW(profile_levels(o), std::invalid_argument);  // no such level
  o.levels = {};
  o.codecs = {"no-such-codec"};
  EXPECT_THROW(profile_levels(o), std::invalid_argument);
  o.codecs = {"quant:bits=99"};
  EXPECT_THROW(profile_levels(o), std::invalid_argument);
  o.codecs = {};
  EXPECT_THROW(profile_levels(o), std::invalid_argument);
}

TEST_F(ContextProfiler, ProfileErrors) {
  const auto& m = stories();
  const auto contexts = text_contexts(m, kText, 1, kT, kK, 3000);
  ProfilingOptions o = test_options();
  o.chunk_tokens = 0;
  EXPECT_THROW(profile_context(m, contexts[0], o), std::invalid_argument);
  o = test_options();
  o.codecs = {"cachegen", "cachegen"};
  EXPECT_THROW(profile_context(m, contexts[0], o), std::invalid_argument);
  o.codecs = {"bogus"};
  EXPECT_THROW(profile_context(m, contexts[0], o), std::invalid_argument);
  o = test_options();
  ContextTokens too_long = contexts[0];
  too_long.context_ids.resize(481, 1);  // 481 + 32 > 512
  try {
    profile_context(m, too_long, o);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("512"), std::string::npos) << e.what();
  }
  too_long.context_ids.resize(480);  // exactly fits
  too_long.continuation_ids.resize(2);
  o.codecs = {"zstd"};
  EXPECT_NO_THROW(profile_context(m, too_long, o));
  ContextTokens short_k = contexts[0];
  short_k.continuation_ids.resize(1);
  EXPECT_THROW(profile_context(m, short_k, o), std::invalid_argument);
  ContextTokens empty = contexts[0];
  empty.context_ids.clear();
  EXPECT_THROW(profile_context(m, empty, o), std::invalid_argument);
}

// One SmolLM2 context (WikiText-2), when the model has been fetched: a GQA model with a BPE tokenizer.
TEST(ContextProfilerSmolLM2, ProfilesAWikiTextContext) {
  if (!have("models/smollm2/SmolLM2-135M-Instruct.Q4_1.gguf") || !have("text/wikitext2/wiki.test.raw"))
    GTEST_SKIP() << "SmolLM2 GGUF or WikiText-2 not fetched: run scripts/fetch-data.sh";
  const models::LoadedModel m = models::load_model("smollm2");
  const auto contexts = text_contexts(m, "text/wikitext2/wiki.test.raw", 1, 256, 16, 20000);
  ProfilingOptions o;
  o.chunk_tokens = 128;
  o.codecs = {"cachegen", "quant:bits=8"};
  const auto measured = profile_context(m, contexts[0], o);
  EXPECT_EQ(measured.profile.name, "wiki.test-0");
  EXPECT_EQ(measured.profile.chunks.size(), 2u);
  EXPECT_NO_THROW(sim::context_profile_from_json(sim::to_json(measured.profile)));
  const auto& c = m.model->config();
  EXPECT_EQ(measured.fp16_bytes_per_token, 4.0 * c.n_layers * c.kv_channels());
  for (const auto& chunk : measured.profile.chunks)
    EXPECT_LT(chunk.levels[0].bytes, chunk.levels[1].bytes);  // cachegen:1 < cachegen:2
}

}  // namespace
}  // namespace kvstream::profiling
