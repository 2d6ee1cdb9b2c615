// A Llama-family decoder in LibTorch, written out as straight-line math (llama2.c's run.c style):
//   x = embed(tokens)
//   per layer:  h = x + Wo · attention(RoPE(Wq·n), RoPE(Wk·n), Wv·n),  n = RMSNorm(x)
//               x = h + W2 · (silu(W1·m) ⊙ W3·m),                      m = RMSNorm(h)
//   logits = classifier · RMSNorm(x)
// Attention is causal, grouped-query (query head h reads KV head h / (n_heads / n_kv_heads)) and
// scaled by 1/sqrt(head_dim); it is written out (LibTorch 1.13 has no scaled_dot_product_attention).
//
// The KV cache is exported in kvstream's canonical layout [L][2][T][C] (codec/kv_cache.h) with
// C = n_kv_heads · head_dim, channel = head · head_dim + dim, K stored *after* RoPE (what attention
// reads, and what the codec compresses).
#pragma once
#include <torch/torch.h>

#include <functional>
#include <vector>

#include "models/llama_config.h"

namespace kvstream::models {

// Linear weights are [out_features, in_features] (y = W·x), as in llama2.c and Hugging Face.
struct LlamaLayerWeights {
  torch::Tensor attn_norm;   // [dim]
  torch::Tensor wq;          // [n_heads·head_dim, dim]
  torch::Tensor wk, wv;      // [n_kv_heads·head_dim, dim]
  torch::Tensor wo;          // [dim, n_heads·head_dim]
  torch::Tensor ffn_norm;    // [dim]
  torch::Tensor w1, w3;      // [hidden_dim, dim]  (gate, up)
  torch::Tensor w2;          // [dim, hidden_dim]  (down)
};

struct LlamaWeights {
  torch::Tensor token_embedding;  // [vocab, dim]
  std::vector<LlamaLayerWeights> layers;
  torch::Tensor final_norm;       // [dim]
  torch::Tensor classifier;       // [vocab, dim]; the embedding itself when tied
};

// Per-layer K and V of a sequence: each [n_kv_heads, T, head_dim] in the model's dtype and on its
// device, K after RoPE.
struct KvState {
  std::vector<torch::Tensor> keys, values;
  int64_t tokens() const { return keys.empty() ? 0 : keys.front().size(1); }
};

// What attention computed in one layer of a forward pass, for analyses that need more than the KV
// (eval/key_sensitivity.h). Tensors are the pass's own, in the model's dtype and on its device.
struct LayerAttention {
  int layer = 0;
  torch::Tensor queries;      // [n_heads, T, head_dim], before RoPE
  torch::Tensor attention;    // [n_heads, T, past + T], the softmax weights (0 above the diagonal)
  torch::Tensor values;       // [n_kv_heads, past + T, head_dim]
  torch::Tensor outputs;      // [n_heads, T, head_dim], attention · values, before W_o
};
using AttentionObserver = std::function<void(const LayerAttention&)>;

// The model runs where its weights are and in their dtype, both taken from the token embedding
// (loaders give float32 on the CPU; random_model may give bf16 or fp16 on a GPU); every weight and
// the RoPE tables share that device and dtype.
class LlamaModel {
 public:
  LlamaModel(LlamaConfig config, LlamaWeights weights);

  const LlamaConfig& config() const { return config_; }
  const LlamaWeights& weights() const { return weights_; }

  // Causal prefill of `tokens` at positions prefix.tokens() .. + T - 1, attending to `prefix` (may be
  // empty) and to themselves. Returns logits [T, vocab] ([1, vocab] for the last position only when
  // `last_logits_only`, as serving needs for the first output token); `kv` (if given) receives
  // prefix + new KV; `observer` (if given) is called once per layer, in order.
  torch::Tensor forward(const std::vector<int32_t>& tokens, const KvState& prefix, KvState* kv,
                        bool last_logits_only = false, const AttentionObserver& observer = {}) const;

  // Greedy generation of `steps` tokens after `prompt` (one prefill, then one token at a time).
  std::vector<int32_t> generate_greedy(const std::vector<int32_t>& prompt, int steps) const;

  // Moves and/or converts every weight: `model.to(torch::kCUDA)` keeps the dtype,
  // `model.to(torch::TensorOptions().device(torch::kCUDA).dtype(torch::kBFloat16))` changes both.
  void to(const torch::TensorOptions& options);
  torch::Device device() const { return weights_.token_embedding.device(); }
  torch::ScalarType dtype() const { return weights_.token_embedding.scalar_type(); }

  // RoPE as the model applies it: x [heads, T, head_dim] at positions first_position .. + T - 1.
  torch::Tensor rope(const torch::Tensor& x, int64_t first_position) const;
  // The same for rows x [N, head_dim], row n at positions[n] (int64 [N], each in [0, max_seq_len)).
  torch::Tensor rope_at(const torch::Tensor& x, const torch::Tensor& positions) const;

 private:
  // x [heads, T, head_dim] turned by the angles cos, sin [T, head_dim / 2].
  torch::Tensor turn(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin) const;
  LlamaConfig config_;
  LlamaWeights weights_;
  torch::Tensor rope_cos_, rope_sin_;  // [max_seq_len, head_dim / 2]
};

}  // namespace kvstream::models
