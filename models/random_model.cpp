#include "models/random_model.h"

#include <vector>

namespace kvstream::models {

LlamaModel random_model(LlamaConfig config, uint64_t seed, int layers, const torch::TensorOptions& options) {
  if (layers > 0 && layers < config.n_layers) config.n_layers = layers;
  torch::manual_seed(seed);
  auto normal = [&](std::vector<int64_t> shape) { return torch::randn(shape, options).mul_(0.02); };
  auto ones = [&](int64_t size) { return torch::ones({size}, options); };
  const int64_t dim = config.dim, hidden = config.hidden_dim;
  const int64_t q_dim = int64_t(config.n_heads) * config.head_dim(), kv_dim = config.kv_channels();
  LlamaWeights w;
  w.token_embedding = normal({config.vocab_size, dim});
  for (int l = 0; l < config.n_layers; ++l)
    w.layers.push_back({.attn_norm = ones(dim), .wq = normal({q_dim, dim}), .wk = normal({kv_dim, dim}),
                        .wv = normal({kv_dim, dim}), .wo = normal({dim, q_dim}), .ffn_norm = ones(dim),
                        .w1 = normal({hidden, dim}), .w3 = normal({hidden, dim}), .w2 = normal({dim, hidden})});
  w.final_norm = ones(dim);
  w.classifier = config.tied_embeddings ? w.token_embedding : normal({config.vocab_size, dim});
  return LlamaModel(config, std::move(w));
}

}  // namespace kvstream::models
