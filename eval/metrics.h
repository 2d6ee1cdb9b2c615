// Next-token metrics of a continuation scored after two KV caches: the fp16 reference and a decoded
// one. Shared by `kvstream quality` (eval/text_quality.h) and the context profiler
// (profiling/context_profiler.h). Log-probabilities are [N, vocab] float64 tensors, one row per fed
// token; row i predicts targets[i].
#pragma once
#include <cstdint>
#include <torch/torch.h>
#include <vector>

#include "models/llama_model.h"

namespace kvstream::eval {

// log_softmax of the model's logits for `fed` after `kv`, in float64 on the model's device.
torch::Tensor next_token_log_probs(const models::LlamaModel& model, const std::vector<int32_t>& fed,
                                   const models::KvState& kv);

// Mean negative log-likelihood of `targets`; exp of it is the perplexity.
double mean_nll(const torch::Tensor& log_probs, const std::vector<int32_t>& targets);

struct ContinuationScores {
  double nll = 0;         // mean_nll after the decoded KV
  double kl_mean = 0;     // mean over positions of KL(reference || decoded)
  double top1_agree = 0;  // share of positions whose argmax equals the reference's, in [0, 1]
};
ContinuationScores score_continuation(const torch::Tensor& reference_log_probs, const torch::Tensor& log_probs,
                                      const std::vector<int32_t>& targets);

// How many leading tokens of two greedy continuations are equal.
size_t greedy_match_tokens(const std::vector<int32_t>& reference, const std::vector<int32_t>& decoded);

}  // namespace kvstream::eval
