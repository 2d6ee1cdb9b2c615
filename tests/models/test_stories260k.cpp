// stories260K against the independent fp32 NumPy reference of docs/DATA.md §2: logits
// after BOS, a 48-step greedy sequence, tokenizer ids, and mean NLL on TinyStories text. Plus the
// runtime's own invariants: prefill at once == one token at a time == prefill continuing a prefix.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "common/data_resolver.h"
#include "models/llama2c_checkpoint.h"
#include "models/llama2c_tokenizer.h"
#include "models/sentencepiece_tokenizer.h"

namespace kvstream::models {
namespace {

const LlamaModel& stories() {
  static const LlamaModel model = load_llama2c_checkpoint(common::resolve_data("models/stories260K/stories260K.bin"));
  return model;
}

const Llama2cTokenizer& tok512() {
  static const Llama2cTokenizer tokenizer(common::resolve_data("models/stories260K/tok512.bin"), 512);
  return tokenizer;
}

std::string tinystories_text() {
  std::ifstream in(common::resolve_data("text/tinystories/tinystories_val.txt"));
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Mean next-token NLL (nats) of ids[1..] given the earlier ids.
double mean_nll(const LlamaModel& model, const std::vector<int32_t>& ids) {
  const auto logits = model.forward(ids, {}, nullptr);
  const auto log_probs = torch::log_softmax(logits.narrow(0, 0, logits.size(0) - 1), -1);
  const auto targets = torch::tensor(std::vector<int64_t>(ids.begin() + 1, ids.end()));
  return -log_probs.gather(1, targets.unsqueeze(1)).mean().item<double>();
}

TEST(Stories260K, LoadsTheLlama2cHeader) {
  const LlamaConfig& c = stories().config();
  EXPECT_EQ(c.dim, 64);
  EXPECT_EQ(c.hidden_dim, 172);
  EXPECT_EQ(c.n_layers, 5);
  EXPECT_EQ(c.n_heads, 8);
  EXPECT_EQ(c.n_kv_heads, 4);
  EXPECT_EQ(c.vocab_size, 512);
  EXPECT_EQ(c.max_seq_len, 512);
  EXPECT_TRUE(c.tied_embeddings);
  EXPECT_EQ(c.kv_channels(), 32);
}

TEST(Stories260K, LogitsAfterBosMatchTheReference) {
  const auto logits = stories().forward({1}, {}, nullptr)[0];
  const double expected[] = {-6.22292, 8.40434, -6.22374, -6.22254, -6.22196};
  for (int i = 0; i < 5; ++i) EXPECT_NEAR(logits[i].item<double>(), expected[i], 1e-4 * std::fabs(expected[i])) << i;
}

TEST(Stories260K, GreedyGenerationMatchesTheReference) {
  const std::vector<int32_t> expected = {403, 407, 261, 378, 432, 383, 286, 261, 376, 298, 315, 421, 395, 317, 426, 338,
                                         401, 396, 267, 337, 410, 408, 419, 292, 411, 322, 265, 282, 295, 433, 426, 385,
                                         328, 432, 358, 394, 261, 370, 432, 352, 266, 268, 388, 426, 338, 391, 266, 267};
  ASSERT_EQ(expected.size(), 48u);
  const auto generated = stories().generate_greedy({1}, 48);
  EXPECT_EQ(generated, expected);
  std::vector<int32_t> with_bos = {1};
  with_bos.insert(with_bos.end(), generated.begin(), generated.begin() + 15);
  EXPECT_EQ(tok512().decode(with_bos), "Once upon a time, there was a little girl named Lily.");
}

TEST(Stories260K, BothTokenizersGiveTheReferenceIds) {
  const std::string sentence = "Once upon a time, there was a little girl named Lily.";
  const std::vector<int32_t> expected = {1, 403, 407, 261, 378, 432, 383, 286, 261, 376, 298, 315, 421, 395, 317, 426};
  EXPECT_EQ(tok512().encode(sentence, true), expected);
  const SentencePieceTokenizer sp(common::resolve_data("models/stories260K/tok512.model"));
  EXPECT_EQ(sp.encode(sentence, true), expected);
  // And on real text, including the file's non-ASCII quotes (byte fallback).
  const std::string text = tinystories_text().substr(0, 3000);
  const auto ids = tok512().encode(text, true);
  EXPECT_EQ(sp.encode(text, true), ids);
  EXPECT_EQ(tok512().decode(ids), text);
}

TEST(Stories260K, MeanNllOnTinyStoriesMatchesTheReference) {
  const std::string text = tinystories_text();
  const std::string first_story = text.substr(0, text.find("\n\n", text.find("\n\n") + 2));
  ASSERT_EQ(first_story.size(), 349u);
  const auto story_ids = tok512().encode(first_story, true);
  EXPECT_EQ(story_ids.size(), 171u);
  EXPECT_NEAR(mean_nll(stories(), story_ids), 1.2977, 1e-3);

  auto window = tok512().encode(text.substr(0, 4000), true);
  window.resize(512);
  EXPECT_NEAR(mean_nll(stories(), window), 1.3112, 1e-3);
}

TEST(Stories260K, PrefillEqualsStepwiseAndPrefixContinuation) {
  const auto ids = tok512().encode(tinystories_text().substr(0, 600), true);
  ASSERT_GT(ids.size(), 100u);
  KvState full_kv;
  const auto full = stories().forward(ids, {}, &full_kv);

  KvState kv;
  for (size_t i = 0; i < ids.size(); ++i) {
    KvState next;
    const auto step = stories().forward({ids[i]}, kv, &next);
    ASSERT_TRUE(torch::allclose(step[0], full[static_cast<int64_t>(i)], 1e-4, 1e-4)) << "position " << i;
    kv = std::move(next);
  }
  for (int l = 0; l < 5; ++l) {
    EXPECT_TRUE(torch::allclose(kv.keys[l], full_kv.keys[l], 1e-5, 1e-5)) << l;
    EXPECT_TRUE(torch::allclose(kv.values[l], full_kv.values[l], 1e-5, 1e-5)) << l;
  }

  const size_t split = 64;  // a chunk recomputed as text after earlier chunks arrived as KV
  KvState prefix;
  stories().forward(std::vector<int32_t>(ids.begin(), ids.begin() + split), {}, &prefix);
  KvState continued;
  const auto tail = stories().forward(std::vector<int32_t>(ids.begin() + split, ids.end()), prefix, &continued);
  EXPECT_TRUE(torch::allclose(tail, full.narrow(0, split, full.size(0) - int64_t(split)), 1e-4, 1e-4));
  EXPECT_EQ(continued.tokens(), static_cast<int64_t>(ids.size()));
}

TEST(Stories260K, BadInputIsAClearError) {
  EXPECT_THROW(stories().forward({600}, {}, nullptr), std::invalid_argument);  // outside the vocabulary
  EXPECT_THROW(stories().forward(std::vector<int32_t>(513, 1), {}, nullptr), std::invalid_argument);  // > seq_len
  const auto dir = std::filesystem::temp_directory_path() / "kvstream_stories_trunc";
  std::filesystem::create_directories(dir);
  {
    std::ifstream in(common::resolve_data("models/stories260K/stories260K.bin"), std::ios::binary);
    std::string bytes(200000, '\0');
    in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    std::ofstream(dir / "cut.bin", std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  try {
    load_llama2c_checkpoint(dir / "cut.bin");
    FAIL() << "truncated checkpoint loaded";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("truncated in tensor wq"), std::string::npos) << e.what();
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace kvstream::models
