#include "models/llama_model.h"

#include <cmath>
#include <stdexcept>

namespace kvstream::models {
namespace {

torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& weight, float eps) {
  return x * torch::rsqrt(x.pow(2).mean(-1, /*keepdim=*/true) + eps) * weight;
}

// y = W·x for each row x, with W stored [out, in].
torch::Tensor project(const torch::Tensor& x, const torch::Tensor& w) { return torch::matmul(x, w.t()); }

// [T, heads·head_dim] -> [heads, T, head_dim]
torch::Tensor split_heads(const torch::Tensor& x, int64_t heads) {
  return x.view({x.size(0), heads, -1}).transpose(0, 1);
}

}  // namespace

LlamaModel::LlamaModel(LlamaConfig config, LlamaWeights weights) : config_(std::move(config)), weights_(std::move(weights)) {
  if (config_.dim <= 0 || config_.n_heads <= 0 || config_.n_kv_heads <= 0 || config_.dim % config_.n_heads != 0 ||
      config_.n_heads % config_.n_kv_heads != 0 || config_.head_dim() % 2 != 0)
    throw std::invalid_argument("model " + config_.name + ": inconsistent config (dim " + std::to_string(config_.dim) +
                                ", heads " + std::to_string(config_.n_heads) + ", kv heads " +
                                std::to_string(config_.n_kv_heads) + ")");
  if (static_cast<int>(weights_.layers.size()) != config_.n_layers)
    throw std::invalid_argument("model " + config_.name + ": " + std::to_string(weights_.layers.size()) +
                                " layers of weights for n_layers = " + std::to_string(config_.n_layers));
  // RoPE angle of pair i at position p: p · theta^(-2i / head_dim) (llama2.c, Meta, HF alike).
  const int64_t half = config_.head_dim() / 2;
  const auto exponents = torch::arange(0, half, torch::kFloat64) * (2.0 / config_.head_dim());
  const auto inv_freq = torch::pow(double(config_.rope_theta), -exponents);
  const auto positions = torch::arange(0, config_.max_seq_len, torch::kFloat64);
  const auto angles = torch::outer(positions, inv_freq);
  const auto options = torch::TensorOptions().device(device()).dtype(dtype());
  rope_cos_ = angles.cos().to(options);
  rope_sin_ = angles.sin().to(options);
}

void LlamaModel::to(const torch::TensorOptions& options) {
  auto move = [&](torch::Tensor& t) { t = t.to(options); };
  const bool tied = weights_.classifier.is_same(weights_.token_embedding);
  move(weights_.token_embedding);
  move(weights_.final_norm);
  weights_.classifier = tied ? weights_.token_embedding : weights_.classifier.to(options);
  for (auto& l : weights_.layers)
    for (auto* t : {&l.attn_norm, &l.wq, &l.wk, &l.wv, &l.wo, &l.ffn_norm, &l.w1, &l.w2, &l.w3}) move(*t);
  move(rope_cos_);
  move(rope_sin_);
}

torch::Tensor LlamaModel::rope(const torch::Tensor& x, int64_t first_position) const {
  return turn(x, rope_cos_.narrow(0, first_position, x.size(1)), rope_sin_.narrow(0, first_position, x.size(1)));
}

torch::Tensor LlamaModel::rope_at(const torch::Tensor& x, const torch::Tensor& positions) const {
  return turn(x.unsqueeze(0), rope_cos_.index_select(0, positions), rope_sin_.index_select(0, positions)).squeeze(0);
}

torch::Tensor LlamaModel::turn(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin) const {
  const int64_t tokens = x.size(1), half = x.size(2) / 2;  // cos, sin: [T, half], broadcast over heads
  if (config_.rope_layout == RopeLayout::kInterleavedPairs) {
    const auto pairs = x.view({x.size(0), tokens, half, 2});
    const auto even = pairs.select(3, 0), odd = pairs.select(3, 1);
    return torch::stack({even * cos - odd * sin, even * sin + odd * cos}, 3).view_as(x);
  }
  const auto first = x.narrow(2, 0, half), second = x.narrow(2, half, half);
  return torch::cat(std::vector<torch::Tensor>{first * cos - second * sin, second * cos + first * sin}, 2);
}

torch::Tensor LlamaModel::forward(const std::vector<int32_t>& tokens, const KvState& prefix, KvState* kv,
                                  bool last_logits_only, const AttentionObserver& observer) const {
  torch::NoGradGuard no_grad;
  const int64_t n = static_cast<int64_t>(tokens.size()), past = prefix.tokens();
  if (n == 0) throw std::invalid_argument("forward: no tokens");
  if (past + n > config_.max_seq_len)
    throw std::invalid_argument("model " + config_.name + ": " + std::to_string(past + n) +
                                " positions exceed its maximum sequence length " + std::to_string(config_.max_seq_len));
  if (past > 0 && static_cast<int>(prefix.keys.size()) != config_.n_layers)
    throw std::invalid_argument("forward: prefix KV has " + std::to_string(prefix.keys.size()) + " layers, the model " +
                                std::to_string(config_.n_layers));
  for (int32_t id : tokens)
    if (id < 0 || id >= config_.vocab_size)
      throw std::invalid_argument("forward: token id " + std::to_string(id) + " outside the vocabulary [0, " +
                                  std::to_string(config_.vocab_size) + ")");
  const auto ids = torch::tensor(std::vector<int64_t>(tokens.begin(), tokens.end()), torch::kInt64).to(device());
  const int64_t heads = config_.n_heads, kv_heads = config_.n_kv_heads, group = heads / kv_heads;
  const double scale = 1.0 / std::sqrt(double(config_.head_dim()));
  // Query i sits at position past + i and sees keys 0 .. past + i.
  const auto causal = torch::ones({n, past + n}, torch::TensorOptions().dtype(torch::kBool).device(device()))
                          .triu(past + 1);
  KvState out;
  auto x = weights_.token_embedding.index_select(0, ids);  // [T, dim]
  for (int l = 0; l < config_.n_layers; ++l) {
    const LlamaLayerWeights& w = weights_.layers[static_cast<size_t>(l)];
    const auto normed = rms_norm(x, w.attn_norm, config_.norm_eps);
    const auto q_unturned = split_heads(project(normed, w.wq), heads);
    const auto q = rope(q_unturned, past);
    auto k = rope(split_heads(project(normed, w.wk), kv_heads), past);
    auto v = split_heads(project(normed, w.wv), kv_heads);
    if (past > 0) {
      k = torch::cat(std::vector<torch::Tensor>{prefix.keys[static_cast<size_t>(l)], k}, 1);
      v = torch::cat(std::vector<torch::Tensor>{prefix.values[static_cast<size_t>(l)], v}, 1);
    }
    const auto k_heads = k.repeat_interleave(group, 0), v_heads = v.repeat_interleave(group, 0);
    const auto scores = torch::matmul(q, k_heads.transpose(1, 2)).mul(scale).masked_fill(causal, -INFINITY);
    const auto attention = torch::softmax(scores, -1);
    const auto attended = torch::matmul(attention, v_heads);  // [heads, T, head_dim]
    if (observer) observer({l, q_unturned, attention, v, attended});
    x = x + project(attended.transpose(0, 1).reshape({n, -1}), w.wo);
    const auto m = rms_norm(x, w.ffn_norm, config_.norm_eps);
    x = x + project(torch::silu(project(m, w.w1)) * project(m, w.w3), w.w2);
    if (kv) {
      out.keys.push_back(k);
      out.values.push_back(v);
    }
  }
  if (kv) *kv = std::move(out);
  if (last_logits_only) x = x.narrow(0, n - 1, 1);
  return project(rms_norm(x, weights_.final_norm, config_.norm_eps), weights_.classifier);
}

std::vector<int32_t> LlamaModel::generate_greedy(const std::vector<int32_t>& prompt, int steps) const {
  KvState kv;
  auto logits = forward(prompt, {}, &kv);
  std::vector<int32_t> out;
  for (int i = 0; i < steps; ++i) {
    out.push_back(static_cast<int32_t>(logits[-1].argmax().item<int64_t>()));
    if (i + 1 < steps) {
      KvState next;
      logits = forward({out.back()}, kv, &next);
      kv = std::move(next);
    }
  }
  return out;
}

}  // namespace kvstream::models
