// The Hugging Face loader on a real HF checkpoint of stories260K written here the way HF's
// convert_llama_weights_to_hf.py would (HF names, Q/K rows permuted for rotate-half RoPE): its
// logits must equal the llama2.c model's in F32, and those of the llama2.c model with rounded
// weights in BF16/F16 shards. Plus broken checkpoints, each a std::runtime_error naming the file
// and the tensor or key.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "common/data_resolver.h"
#include "common/safetensors.h"
#include "models/hf_checkpoint.h"
#include "models/llama2c_checkpoint.h"
#include "models/llama2c_tokenizer.h"
#include "tests/test_support.h"

namespace kvstream::models {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using TensorMap = std::map<std::string, torch::Tensor>;

::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << part << "\"";
}

const LlamaModel& stories() {
  static const LlamaModel model = load_llama2c_checkpoint(common::resolve_data("models/stories260K/stories260K.bin"));
  return model;
}

// Real text as ids: the start of the TinyStories validation file.
const std::vector<int32_t>& story_ids() {
  static const std::vector<int32_t> ids = [] {
    std::ifstream in(common::resolve_data("text/tinystories/tinystories_val.txt"));
    std::string text(800, '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    return Llama2cTokenizer(common::resolve_data("models/stories260K/tok512.bin"), 512).encode(text, true);
  }();
  return ids;
}

// The llama2.c model with every weight rounded to `type`: what a checkpoint in that dtype holds.
LlamaModel rounded_stories(torch::ScalarType type) {
  LlamaWeights w = stories().weights();
  auto round = [&](torch::Tensor& t) { t = t.to(type).to(torch::kFloat32); };
  round(w.token_embedding);
  round(w.final_norm);
  w.classifier = w.token_embedding;  // stories260K is tied
  for (auto& l : w.layers)
    for (auto* t : {&l.attn_norm, &l.wq, &l.wk, &l.wv, &l.wo, &l.ffn_norm, &l.w1, &l.w3, &l.w2}) round(*t);
  return LlamaModel(stories().config(), std::move(w));
}

// stories260K's weights under HF names. Q and K rows are permuted as convert_llama_weights_to_hf.py
// does, so that rotate-half RoPE reproduces llama2.c's pairs: within each head, row 2i moves to i
// and row 2i + 1 to i + head_dim/2.
TensorMap hf_tensors() {
  const LlamaConfig& c = stories().config();
  const LlamaWeights& w = stories().weights();
  auto permute = [&](const torch::Tensor& t, int64_t heads) {
    return t.view({heads, c.head_dim() / 2, 2, t.size(1)}).transpose(1, 2).reshape({t.size(0), t.size(1)});
  };
  TensorMap out = {{"model.embed_tokens.weight", w.token_embedding},
                   {"model.norm.weight", w.final_norm},
                   {"lm_head.weight", w.classifier}};
  for (int l = 0; l < c.n_layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    const LlamaLayerWeights& lw = w.layers[static_cast<size_t>(l)];
    out[p + "input_layernorm.weight"] = lw.attn_norm;
    out[p + "self_attn.q_proj.weight"] = permute(lw.wq, c.n_heads);
    out[p + "self_attn.k_proj.weight"] = permute(lw.wk, c.n_kv_heads);
    out[p + "self_attn.v_proj.weight"] = lw.wv;
    out[p + "self_attn.o_proj.weight"] = lw.wo;
    out[p + "post_attention_layernorm.weight"] = lw.ffn_norm;
    out[p + "mlp.gate_proj.weight"] = lw.w1;
    out[p + "mlp.up_proj.weight"] = lw.w3;
    out[p + "mlp.down_proj.weight"] = lw.w2;
  }
  return out;
}

json hf_config(bool tied) {
  const LlamaConfig& c = stories().config();
  return {{"architectures", json::array({"LlamaForCausalLM"})},
          {"model_type", "llama"},
          {"hidden_act", "silu"},
          {"hidden_size", c.dim},
          {"intermediate_size", c.hidden_dim},
          {"num_hidden_layers", c.n_layers},
          {"num_attention_heads", c.n_heads},
          {"num_key_value_heads", c.n_kv_heads},
          {"vocab_size", c.vocab_size},
          {"max_position_embeddings", c.max_seq_len},
          {"rms_norm_eps", c.norm_eps},
          {"rope_theta", c.rope_theta},
          {"rope_scaling", nullptr},
          {"tie_word_embeddings", tied}};
}

common::Tensor encode(const torch::Tensor& t, const std::string& dtype) {
  static const std::map<std::string, torch::ScalarType> types = {
      {"F32", torch::kFloat32}, {"F16", torch::kFloat16}, {"BF16", torch::kBFloat16}};
  const auto converted = t.to(types.at(dtype)).contiguous();
  const auto* bytes = static_cast<const uint8_t*>(converted.data_ptr());
  return {dtype, t.sizes().vec(), std::vector<uint8_t>(bytes, bytes + converted.nbytes())};
}

// config.json plus model.safetensors (shards == 1), or tensors dealt round-robin into
// model-0000k-of-0000n.safetensors with model.safetensors.index.json.
void write_checkpoint(const fs::path& dir, const json& config, const TensorMap& tensors, const std::string& dtype,
                      int shards) {
  fs::create_directories(dir);
  std::ofstream(dir / "config.json") << config.dump(2);
  auto shard_name = [&](int k) {
    if (shards == 1) return std::string("model.safetensors");
    char name[64];
    std::snprintf(name, sizeof name, "model-%05d-of-%05d.safetensors", k + 1, shards);
    return std::string(name);
  };
  std::vector<common::SafetensorsFile> files(static_cast<size_t>(shards));
  json index = {{"metadata", {{"total_size", 0}}}, {"weight_map", json::object()}};
  int next = 0;
  for (const auto& [name, tensor] : tensors) {
    const int k = next++ % shards;
    files[static_cast<size_t>(k)].tensors[name] = encode(tensor, dtype);
    index["weight_map"][name] = shard_name(k);
  }
  for (int k = 0; k < shards; ++k) common::write_safetensors(dir / shard_name(k), files[static_cast<size_t>(k)]);
  if (shards > 1) std::ofstream(dir / "model.safetensors.index.json") << index.dump(2);
}

class HfCheckpoint : public test_support::TempDirTest {
 protected:
  // The message of the std::runtime_error that loading `dir` throws.
  static std::string load_error(const fs::path& dir) {
    try {
      load_hf_checkpoint(dir);
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    ADD_FAILURE() << dir << " loaded without error";
    return "";
  }

  // Logits of `loaded` against `reference`'s on real text: every position's top-1 equal and the
  // largest difference below `tolerance`.
  static void expect_same_logits(const LlamaModel& loaded, const LlamaModel& reference, double tolerance) {
    const auto expected = reference.forward(story_ids(), {}, nullptr);
    const auto actual = loaded.forward(story_ids(), {}, nullptr);
    ASSERT_EQ(actual.sizes(), expected.sizes());
    EXPECT_TRUE(torch::equal(actual.argmax(1), expected.argmax(1)));
    EXPECT_LT((actual - expected).abs().max().item<double>(), tolerance);
  }
};

TEST_F(HfCheckpoint, F32MatchesTheLlama2cModel) {
  ASSERT_GT(story_ids().size(), 200u);  // and within the 512 positions
  write_checkpoint(dir_ / "stories260K-hf", hf_config(false), hf_tensors(), "F32", 1);
  const LlamaModel model = load_hf_checkpoint(dir_ / "stories260K-hf/");
  const LlamaConfig& c = model.config();
  EXPECT_EQ(c.name, "stories260K-hf");
  EXPECT_EQ(c.rope_layout, RopeLayout::kRotateHalf);
  EXPECT_FALSE(c.tied_embeddings);
  EXPECT_EQ(std::tie(c.dim, c.hidden_dim, c.n_layers, c.n_heads, c.n_kv_heads, c.vocab_size, c.max_seq_len),
            std::make_tuple(64, 172, 5, 8, 4, 512, 512));
  EXPECT_FLOAT_EQ(c.norm_eps, stories().config().norm_eps);
  expect_same_logits(model, stories(), 1e-4);
}

TEST_F(HfCheckpoint, Bf16AndF16ShardsLoadExactly) {
  // BF16 keeps 8 significant bits: on stories260K its logits move by up to 0.2 and 2 of 405 top-1
  // tokens change, so BF16 is checked against the llama2.c model with BF16-rounded weights.
  TensorMap tied = hf_tensors();
  tied.erase("lm_head.weight");
  write_checkpoint(dir_ / "bf16", hf_config(true), tied, "BF16", 2);
  ASSERT_TRUE(fs::exists(dir_ / "bf16/model-00002-of-00002.safetensors"));
  const LlamaModel bf16 = load_hf_checkpoint(dir_ / "bf16");
  EXPECT_TRUE(bf16.config().tied_embeddings);
  expect_same_logits(bf16, rounded_stories(torch::kBFloat16), 1e-4);

  write_checkpoint(dir_ / "f16", hf_config(false), hf_tensors(), "F16", 3);
  const LlamaModel f16 = load_hf_checkpoint(dir_ / "f16");
  expect_same_logits(f16, rounded_stories(torch::kFloat16), 1e-4);
  expect_same_logits(f16, stories(), 0.1);  // F16 is close to F32 itself (measured: 0.017)
}

TEST_F(HfCheckpoint, MissingOrMisshapenTensorsNameFileAndTensor) {
  TensorMap tensors = hf_tensors();
  tensors.erase("model.layers.3.mlp.up_proj.weight");
  write_checkpoint(dir_ / "missing", hf_config(false), tensors, "F32", 1);
  std::string error = load_error(dir_ / "missing");
  EXPECT_TRUE(Contains(error, (dir_ / "missing/model.safetensors").string()));
  EXPECT_TRUE(Contains(error, "no tensor model.layers.3.mlp.up_proj.weight"));

  tensors = hf_tensors();
  tensors["model.layers.0.self_attn.k_proj.weight"] = tensors["model.layers.0.self_attn.q_proj.weight"];
  write_checkpoint(dir_ / "shape", hf_config(false), tensors, "BF16", 2);
  error = load_error(dir_ / "shape");
  EXPECT_TRUE(Contains(error, (dir_ / "shape/model-0000").string()));
  EXPECT_TRUE(Contains(error, "tensor model.layers.0.self_attn.k_proj.weight has shape [64, 64], expected [32, 64]"));

  tensors = hf_tensors();  // Qwen2-style attention biases
  tensors["model.layers.0.self_attn.q_proj.bias"] = torch::zeros({64});
  write_checkpoint(dir_ / "bias", hf_config(false), tensors, "F32", 1);
  EXPECT_TRUE(Contains(load_error(dir_ / "bias"),
                       "tensor model.layers.0.self_attn.q_proj.bias: biases are not supported"));

  write_checkpoint(dir_ / "shards", hf_config(false), hf_tensors(), "F16", 2);
  fs::remove(dir_ / "shards/model-00002-of-00002.safetensors");
  EXPECT_TRUE(Contains(load_error(dir_ / "shards"),
                       (dir_ / "shards/model-00002-of-00002.safetensors: cannot open").string()));
  fs::remove(dir_ / "shards/model.safetensors.index.json");
  EXPECT_TRUE(Contains(load_error(dir_ / "shards"), "neither model.safetensors nor model.safetensors.index.json"));
}

TEST_F(HfCheckpoint, BadConfigNamesFileAndKey) {
  write_checkpoint(dir_ / "m", hf_config(false), hf_tensors(), "F32", 1);
  const std::string config_path = (dir_ / "m/config.json").string();
  auto error_with = [&](const std::string& config_text) {
    std::ofstream(config_path) << config_text;
    return load_error(dir_ / "m");
  };
  EXPECT_TRUE(Contains(error_with(R"({"hidden_size": 64, "intermediate_size": )"), config_path + ": invalid JSON"));
  EXPECT_TRUE(Contains(error_with("[1, 2]"), config_path + ": not a JSON object"));
  auto without = [](const std::string& key) {
    json c = hf_config(false);
    c.erase(key);
    return c.dump();
  };
  EXPECT_TRUE(
      Contains(error_with(without("num_hidden_layers")), config_path + ": key \"num_hidden_layers\" is missing"));
  auto with = [](const std::string& key, const json& value) {
    json c = hf_config(false);
    c[key] = value;
    return c.dump();
  };
  EXPECT_TRUE(Contains(error_with(with("hidden_size", "64")), "key \"hidden_size\" is not a positive integer"));
  EXPECT_TRUE(Contains(error_with(with("num_key_value_heads", 3)), "inconsistent attention shape"));
  EXPECT_TRUE(Contains(error_with(with("architectures", json::array({"GemmaForCausalLM"}))), "key \"architectures\""));
  EXPECT_TRUE(
      Contains(error_with(with("rope_scaling", {{"type", "linear"}, {"factor", 2.0}})), "key \"rope_scaling\""));
  EXPECT_TRUE(Contains(error_with(with("tie_word_embeddings", 1)), "key \"tie_word_embeddings\" is not a boolean"));

  std::ofstream(config_path) << with("sliding_window", 128);  // Mistral-style: positions capped at the window
  EXPECT_EQ(load_hf_checkpoint(dir_ / "m").config().max_seq_len, 128);
}

}  // namespace
}  // namespace kvstream::models
