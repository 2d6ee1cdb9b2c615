#include "eval/metrics.h"

namespace kvstream::eval {

torch::Tensor next_token_log_probs(const models::LlamaModel& model, const std::vector<int32_t>& fed,
                                   const models::KvState& kv) {
  return torch::log_softmax(model.forward(fed, kv, nullptr), -1).to(torch::kFloat64);
}

double mean_nll(const torch::Tensor& log_probs, const std::vector<int32_t>& targets) {
  const auto t = torch::tensor(std::vector<int64_t>(targets.begin(), targets.end())).unsqueeze(1).to(log_probs.device());
  return -log_probs.gather(1, t).mean().item<double>();
}

ContinuationScores score_continuation(const torch::Tensor& reference_log_probs, const torch::Tensor& log_probs,
                                      const std::vector<int32_t>& targets) {
  ContinuationScores s;
  s.nll = mean_nll(log_probs, targets);
  s.kl_mean = (reference_log_probs.exp() * (reference_log_probs - log_probs)).sum(-1).mean().item<double>();
  s.top1_agree = (reference_log_probs.argmax(-1) == log_probs.argmax(-1)).to(torch::kFloat64).mean().item<double>();
  return s;
}

size_t greedy_match_tokens(const std::vector<int32_t>& reference, const std::vector<int32_t>& decoded) {
  size_t same = 0;
  while (same < reference.size() && same < decoded.size() && reference[same] == decoded[same]) ++same;
  return same;
}

}  // namespace kvstream::eval
