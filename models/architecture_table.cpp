#include "models/architecture_table.h"

#include <stdexcept>

namespace kvstream::models {
namespace {

LlamaConfig make(std::string name, int dim, int hidden, int layers, int heads, int kv_heads, int vocab, int max_seq,
                 float theta, RopeLayout layout) {
  LlamaConfig c;
  c.name = std::move(name);
  c.dim = dim;
  c.hidden_dim = hidden;
  c.n_layers = layers;
  c.n_heads = heads;
  c.n_kv_heads = kv_heads;
  c.vocab_size = vocab;
  c.max_seq_len = max_seq;
  c.rope_theta = theta;
  c.rope_layout = layout;
  c.tied_embeddings = false;
  return c;
}

const std::vector<LlamaConfig>& table() {
  using R = RopeLayout;
  static const std::vector<LlamaConfig> archs = {
      make("stories260K", 64, 172, 5, 8, 4, 512, 512, 10000.0f, R::kInterleavedPairs),
      make("smollm2-135m", 576, 1536, 30, 9, 3, 49152, 8192, 100000.0f, R::kInterleavedPairs),
      make("mistral-7b", 4096, 14336, 32, 32, 8, 32000, 32768, 1000000.0f, R::kRotateHalf),
      make("llama-3.1-8b", 4096, 14336, 32, 32, 8, 128256, 131072, 500000.0f, R::kRotateHalf),
      make("longchat-7b", 4096, 11008, 32, 32, 32, 32000, 16384, 10000.0f, R::kRotateHalf),
      make("codellama-34b", 8192, 22016, 48, 64, 8, 32000, 16384, 1000000.0f, R::kRotateHalf),
      make("llama-2-70b", 8192, 28672, 80, 64, 8, 32000, 4096, 10000.0f, R::kRotateHalf),
  };
  return archs;
}

}  // namespace

std::vector<std::string> architecture_names() {
  std::vector<std::string> names;
  for (const auto& c : table()) names.push_back(c.name);
  return names;
}

std::string architecture_list() {
  std::string list;
  for (const auto& name : architecture_names()) list += (list.empty() ? "" : ", ") + name;
  return list;
}

LlamaConfig architecture(const std::string& name) {
  for (const auto& c : table())
    if (c.name == name) return c;
  throw std::invalid_argument("unknown architecture \"" + name + "\" (known: " + architecture_list() + ")");
}

}  // namespace kvstream::models
