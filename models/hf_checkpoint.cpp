#include "models/hf_checkpoint.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <stdexcept>

#include "common/json_reader.h"
#include "common/safetensors.h"

namespace kvstream::models {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::runtime_error file_error(const fs::path& file, const std::string& what) {
  return std::runtime_error(file.string() + ": " + what);
}

// config.json with typed look-ups that name the file and key when one is missing or mistyped.
// A key whose value is null counts as absent; a fallback makes a key optional.
class Config {
 public:
  explicit Config(fs::path file) : file_(std::move(file)), json_(common::read_json_file(file_.string())) {
    if (!json_.is_object()) throw file_error(file_, "not a JSON object");
  }

  const fs::path& file() const { return file_; }
  bool has(const std::string& key) const { return json_.contains(key) && !json_.at(key).is_null(); }

  int positive(const std::string& key, std::optional<int> fallback = {}) const {
    if (!has(key) && fallback) return *fallback;
    const json& v = at(key);
    if (!v.is_number_integer() || v.get<int64_t>() <= 0 || v.get<int64_t>() > (1 << 30))
      throw error(key, "is not a positive integer");
    return v.get<int>();
  }
  float number(const std::string& key, std::optional<float> fallback = {}) const {
    if (!has(key) && fallback) return *fallback;
    if (!at(key).is_number()) throw error(key, "is not a number");
    return at(key).get<float>();
  }
  bool flag(const std::string& key, bool fallback) const {
    if (!has(key)) return fallback;
    if (!at(key).is_boolean()) throw error(key, "is not a boolean");
    return at(key).get<bool>();
  }
  std::string text(const std::string& key, const std::string& fallback) const {
    if (!has(key)) return fallback;
    if (!at(key).is_string()) throw error(key, "is not a string");
    return at(key).get<std::string>();
  }
  std::vector<std::string> texts(const std::string& key) const {
    const json& v = at(key);
    if (!v.is_array() || !std::all_of(v.begin(), v.end(), [](const json& s) { return s.is_string(); }))
      throw error(key, "is not a list of strings");
    return v.get<std::vector<std::string>>();
  }
  std::runtime_error error(const std::string& key, const std::string& what) const {
    return file_error(file_, "key \"" + key + "\" " + what);
  }

 private:
  const json& at(const std::string& key) const {
    if (!has(key)) throw error(key, "is missing");
    return json_.at(key);
  }

  fs::path file_;
  json json_;
};

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

// Every tensor of the checkpoint's safetensors files, as float32, with the file it came from.
class Tensors {
 public:
  explicit Tensors(const fs::path& dir) {
    const fs::path index = dir / "model.safetensors.index.json", single = dir / "model.safetensors";
    std::set<fs::path> shards;
    if (fs::exists(index)) {
      const json j = common::read_json_file(index.string());
      if (!j.is_object() || !j.contains("weight_map") || !j.at("weight_map").is_object())
        throw file_error(index, "key \"weight_map\" is missing or not an object");
      for (const auto& [name, shard] : j.at("weight_map").items()) {
        if (!shard.is_string()) throw file_error(index, "key \"weight_map\".\"" + name + "\" is not a file name");
        shards.insert(dir / shard.get<std::string>());
      }
    } else if (fs::exists(single)) {
      shards.insert(single);
    } else {
      throw std::runtime_error(dir.string() + ": has neither model.safetensors nor model.safetensors.index.json");
    }
    for (const auto& shard : shards) {
      files_ += (files_.empty() ? "" : ", ") + shard.string();
      common::SafetensorsFile file = common::read_safetensors(shard);
      for (auto& [name, raw] : file.tensors) {
        if (name.ends_with(".bias"))
          throw file_error(shard, "tensor " + name + ": biases are not supported (the Llama runtime has none)");
        tensors_[name] = {to_float(raw, shard, name), shard};
      }
    }
  }

  // The tensor `name`, which must have `shape`.
  torch::Tensor get(const std::string& name, const std::vector<int64_t>& shape) const {
    const auto it = tensors_.find(name);
    if (it == tensors_.end()) throw std::runtime_error(files_ + ": no tensor " + name);
    const auto& [tensor, file] = it->second;
    if (tensor.sizes().vec() != shape)
      throw file_error(file, "tensor " + name + " has shape " + shape_text(tensor.sizes().vec()) + ", expected " +
                                 shape_text(shape));
    return tensor;
  }

 private:
  static torch::Tensor to_float(common::Tensor& raw, const fs::path& file, const std::string& name) {
    static const std::map<std::string, torch::ScalarType> types = {
        {"F32", torch::kFloat32}, {"F16", torch::kFloat16}, {"BF16", torch::kBFloat16}};
    const auto type = types.find(raw.dtype);
    if (type == types.end())
      throw file_error(file, "tensor " + name + " has dtype " + raw.dtype + " (supported: F32, F16, BF16)");
    // safetensors data is little-endian, as is every host this runs on; the copy owns its memory.
    return torch::from_blob(raw.data.data(), raw.shape, type->second).to(torch::kFloat32, false, true);
  }

  std::map<std::string, std::pair<torch::Tensor, fs::path>> tensors_;
  std::string files_;  // the files read, comma-separated: named when a tensor is missing
};

}  // namespace

LlamaModel load_hf_checkpoint(const fs::path& dir) {
  const Config cfg(dir / "config.json");
  const auto architectures = cfg.texts("architectures");
  static const std::set<std::string> supported = {"LlamaForCausalLM", "MistralForCausalLM", "Qwen2ForCausalLM"};
  if (architectures.size() != 1 || !supported.contains(architectures.front()))
    throw cfg.error("architectures", "is not one of LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM");
  if (cfg.text("hidden_act", "silu") != "silu") throw cfg.error("hidden_act", "is not \"silu\" (unsupported)");
  if (cfg.has("rope_scaling")) throw cfg.error("rope_scaling", "is set: RoPE scaling is not supported");

  LlamaConfig c;
  c.name = (dir / "").parent_path().filename().string();  // the directory's name, even with a trailing '/'
  c.dim = cfg.positive("hidden_size");
  c.hidden_dim = cfg.positive("intermediate_size");
  c.n_layers = cfg.positive("num_hidden_layers");
  c.n_heads = cfg.positive("num_attention_heads");
  c.n_kv_heads = cfg.positive("num_key_value_heads", c.n_heads);
  c.vocab_size = cfg.positive("vocab_size");
  c.max_seq_len = cfg.positive("max_position_embeddings");
  if (c.max_seq_len > (1 << 24))  // the RoPE table holds every position
    throw cfg.error("max_position_embeddings", "is beyond 16777216 positions");
  c.rope_theta = cfg.number("rope_theta", 10000.0f);
  c.norm_eps = cfg.number("rms_norm_eps");
  c.rope_layout = RopeLayout::kRotateHalf;
  c.tied_embeddings = cfg.flag("tie_word_embeddings", false);
  if (c.dim % c.n_heads != 0 || c.n_heads % c.n_kv_heads != 0 || c.head_dim() % 2 != 0)
    throw file_error(cfg.file(), "inconsistent attention shape (hidden_size " + std::to_string(c.dim) + ", heads " +
                                     std::to_string(c.n_heads) + ", kv heads " + std::to_string(c.n_kv_heads) + ")");
  if (cfg.positive("head_dim", c.head_dim()) != c.head_dim())
    throw cfg.error("head_dim", "differs from hidden_size / num_attention_heads (unsupported)");
  // Within the window, sliding-window attention is full causal attention.
  if (cfg.has("sliding_window") && cfg.flag("use_sliding_window", true))
    c.max_seq_len = std::min(c.max_seq_len, cfg.positive("sliding_window"));

  const Tensors tensors(dir);
  const int64_t dim = c.dim, hidden = c.hidden_dim, q_dim = int64_t(c.n_heads) * c.head_dim(), kv_dim = c.kv_channels();
  LlamaWeights w;
  w.token_embedding = tensors.get("model.embed_tokens.weight", {c.vocab_size, dim});
  for (int l = 0; l < c.n_layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    w.layers.push_back({.attn_norm = tensors.get(p + "input_layernorm.weight", {dim}),
                        .wq = tensors.get(p + "self_attn.q_proj.weight", {q_dim, dim}),
                        .wk = tensors.get(p + "self_attn.k_proj.weight", {kv_dim, dim}),
                        .wv = tensors.get(p + "self_attn.v_proj.weight", {kv_dim, dim}),
                        .wo = tensors.get(p + "self_attn.o_proj.weight", {dim, q_dim}),
                        .ffn_norm = tensors.get(p + "post_attention_layernorm.weight", {dim}),
                        .w1 = tensors.get(p + "mlp.gate_proj.weight", {hidden, dim}),
                        .w3 = tensors.get(p + "mlp.up_proj.weight", {hidden, dim}),
                        .w2 = tensors.get(p + "mlp.down_proj.weight", {dim, hidden})});
  }
  w.final_norm = tensors.get("model.norm.weight", {dim});
  w.classifier = c.tied_embeddings ? w.token_embedding : tensors.get("lm_head.weight", {c.vocab_size, dim});
  return LlamaModel(c, std::move(w));
}

}  // namespace kvstream::models
