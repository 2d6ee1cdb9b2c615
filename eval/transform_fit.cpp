#include "eval/transform_fit.h"

#include <optional>

#include "eval/key_sensitivity.h"
#include "eval/kv_bridge.h"
#include "eval/kv_sensitivity.h"

namespace kvstream::eval {

codec::TransformCalibration fit_transform(const models::LoadedModel& model, const TextWindows& windows,
                                          codec::TransformCalibration::Options options, int sensitivity_windows,
                                          int key_windows, bool keep_rope) {
  options.model = model.name;  // what codecs hold a run's model against (codec::check_codec_model)
  if (!keep_rope) options.rope = rope_spec(model.model->config());
  std::optional<KeyMetrics> keys;  // only when the keys are weighed: plain PCA keys need no attention
  if (key_windows > 0) keys.emplace(*model.model, options.sink_tokens, kTransformKeyQueryPositions, kTransformKeyTopKeys);
  const auto kv = window_kv(model, windows, [&](int i) {
    return i < key_windows ? keys->observer(windows.context_tokens) : models::AttentionObserver{};
  });
  if (keys) options.key_metrics = keys->metrics();
  std::vector<codec::KvChunkView> views;
  for (const auto& window : kv.kv) views.push_back(window.all());
  auto cal = codec::TransformCalibration::build(views, options);
  if (sensitivity_windows > 0) cal.set_row_weights(transform_row_weights(*model.model, kv, sensitivity_windows, cal));
  return cal;
}

}  // namespace kvstream::eval
