#include "codec/transform/gpu_transform_model.h"

namespace kvstream::codec {

PackedTransformModel::PackedTransformModel(const TransformCalibration& cal, const std::vector<TransformRowPlan>& plans,
                                           const TransformGroups& groups, const KvShape& s, int64_t t0, int sinks)
    : angles_(cal.rope(), s.head_dim, t0, s.tokens), groups_(groups) {
  const int rows = s.rows(), channels = s.channels();
  const auto coded = uint64_t(s.tokens - sinks);
  classes_.assign(size_t(rows) * size_t(channels), 0);
  symbol_start_.push_back(0);
  bool own_synthesis = false;  // some row's synthesis is not its basis
  for (int r = 0; r < rows; ++r) own_synthesis = own_synthesis || !cal.row(r).synthesis.empty();
  for (int r = 0; r < rows; ++r) {
    const TransformRowPlan& plan = plans[size_t(r)];
    kept_.push_back(plan.kept());
    step_.push_back(plan.step);
    for (int i = 0; i < plan.kept(); ++i) classes_[size_t(r) * size_t(channels) + size_t(i)] = uint8_t(plan.classes[size_t(i)]);
    symbol_start_.push_back(symbol_start_.back() + coded * uint64_t(plan.kept()));
    const auto& row = cal.row(r);
    mean_.insert(mean_.end(), row.mean.begin(), row.mean.end());
    basis_start_.push_back(basis_.size());
    basis_.insert(basis_.end(), row.basis.begin(), row.basis.begin() + int64_t(plan.kept()) * channels);
    if (!own_synthesis) continue;
    const auto& synthesis = row.synthesis_basis();
    synthesis_.insert(synthesis_.end(), synthesis.begin(), synthesis.begin() + int64_t(plan.kept()) * channels);
  }
  for (int part = 0; part < 2; ++part)
    class_cdf_.insert(class_cdf_.end(), cal.cdf(part, 0), cal.cdf(part, 0) + kTransformClasses * (kTransformAlphabet + 1));

  view_.layers = s.layers;
  view_.kv_heads = s.kv_heads;
  view_.head_dim = s.head_dim;
  view_.tokens = s.tokens;
  view_.sinks = sinks;
  view_.rope_pairs = static_cast<int>(cal.rope().pairs);
  view_.rope_cos = angles_.cos_table().data();
  view_.rope_sin = angles_.sin_table().data();
  view_.kept = kept_.data();
  view_.step = step_.data();
  view_.classes = classes_.data();
  view_.class_cdf = class_cdf_.data();
  view_.symbol_start = symbol_start_.data();
  view_.groups = static_cast<int>(groups_.size());
  view_.group_row = groups_.row.data();
  view_.group_start = groups_.symbol_start.data();
  view_.mean = mean_.data();
  view_.basis = basis_.data();
  view_.synthesis = synthesis_.empty() ? basis_.data() : synthesis_.data();
  view_.basis_start = basis_start_.data();
  view_.basis_floats = basis_.size();
}

}  // namespace kvstream::codec
