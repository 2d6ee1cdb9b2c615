#include "models/gguf_checkpoint.h"

#include <stdexcept>

namespace kvstream::models {
namespace {

std::runtime_error gguf_error(const GgufFile& file, const std::string& what) {
  return std::runtime_error(file.path().string() + ": " + what);
}

// A metadata integer in [1, maximum]; the maxima are far beyond any real model and keep every
// size derived from them (positions, weights) within int and within memory.
int required(const GgufFile& file, const std::string& key, int64_t maximum) {
  const auto value = file.get_integer(key);
  if (!value) throw gguf_error(file, "missing metadata " + key);
  if (*value < 1 || *value > maximum)
    throw gguf_error(file, "metadata " + key + " = " + std::to_string(*value) + " is outside 1.." + std::to_string(maximum));
  return static_cast<int>(*value);
}
constexpr int64_t kMaxWidth = 1 << 20, kMaxLayers = 4096, kMaxHeads = 1 << 16, kMaxContextTokens = 1 << 24;

// The tensor as a float32 torch tensor with shape reversed from GGUF order ({cols, rows} -> [rows, cols]),
// checked against the expected shape.
torch::Tensor load(const GgufFile& file, const std::string& name, std::vector<int64_t> expected) {
  const GgufTensorInfo& info = file.tensor(name);
  std::vector<int64_t> shape(info.dims.rbegin(), info.dims.rend());
  if (shape != expected) {
    auto text = [](const std::vector<int64_t>& s) {
      std::string out = "[";
      for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
      return out + "]";
    };
    throw gguf_error(file, "tensor " + name + " has shape " + text(shape) + ", expected " + text(expected));
  }
  auto values = file.read_tensor_f32(name);
  return torch::from_blob(values.data(), shape, torch::kFloat32).clone();
}

}  // namespace

LlamaModel load_gguf_checkpoint(const GgufFile& file) {
  const auto arch = file.get_string("general.architecture");
  if (arch != "llama")
    throw gguf_error(file, "architecture \"" + arch.value_or("") + "\" is not supported (only \"llama\")");
  LlamaConfig c;
  c.name = file.get_string("general.name").value_or(file.path().stem().string());
  c.dim = required(file, "llama.embedding_length", kMaxWidth);
  c.hidden_dim = required(file, "llama.feed_forward_length", kMaxWidth);
  c.n_layers = required(file, "llama.block_count", kMaxLayers);
  c.n_heads = required(file, "llama.attention.head_count", kMaxHeads);
  c.n_kv_heads = file.get_integer("llama.attention.head_count_kv") ? required(file, "llama.attention.head_count_kv", kMaxHeads)
                                                                    : c.n_heads;
  c.max_seq_len = required(file, "llama.context_length", kMaxContextTokens);
  c.rope_theta = file.get_f32("llama.rope.freq_base").value_or(10000.0f);
  c.norm_eps = file.get_f32("llama.attention.layer_norm_rms_epsilon").value_or(1e-5f);
  c.rope_layout = RopeLayout::kInterleavedPairs;
  const GgufTensorInfo& embedding = file.tensor("token_embd.weight");
  if (embedding.dims.size() != 2) throw gguf_error(file, "token_embd.weight is not a matrix");
  c.vocab_size = static_cast<int>(embedding.dims[1]);
  c.tied_embeddings = file.find_tensor("output.weight") == nullptr;
  if (c.dim <= 0 || c.n_heads <= 0 || c.n_kv_heads <= 0 || c.dim % c.n_heads != 0 || c.n_heads % c.n_kv_heads != 0)
    throw gguf_error(file, "inconsistent attention shape (dim " + std::to_string(c.dim) + ", heads " +
                               std::to_string(c.n_heads) + ", kv heads " + std::to_string(c.n_kv_heads) + ")");

  const int64_t dim = c.dim, hidden = c.hidden_dim, q_dim = int64_t(c.n_heads) * c.head_dim(), kv_dim = c.kv_channels();
  LlamaWeights w;
  w.token_embedding = load(file, "token_embd.weight", {c.vocab_size, dim});
  for (int l = 0; l < c.n_layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    w.layers.push_back({.attn_norm = load(file, p + "attn_norm.weight", {dim}),
                        .wq = load(file, p + "attn_q.weight", {q_dim, dim}),
                        .wk = load(file, p + "attn_k.weight", {kv_dim, dim}),
                        .wv = load(file, p + "attn_v.weight", {kv_dim, dim}),
                        .wo = load(file, p + "attn_output.weight", {dim, q_dim}),
                        .ffn_norm = load(file, p + "ffn_norm.weight", {dim}),
                        .w1 = load(file, p + "ffn_gate.weight", {hidden, dim}),
                        .w3 = load(file, p + "ffn_up.weight", {hidden, dim}),
                        .w2 = load(file, p + "ffn_down.weight", {dim, hidden})});
  }
  w.final_norm = load(file, "output_norm.weight", {dim});
  w.classifier = c.tied_embeddings ? w.token_embedding : load(file, "output.weight", {c.vocab_size, dim});
  return LlamaModel(c, std::move(w));
}

}  // namespace kvstream::models
