#include "eval/transform_fit.h"

#include "eval/key_sensitivity.h"
#include "eval/kv_bridge.h"
#include "eval/kv_sensitivity.h"

namespace kvstream::eval {

codec::TransformCalibration fit_transform(const models::LoadedModel& model, const TextWindows& windows,
                                          codec::TransformCalibration::Options options, int sensitivity_windows,
                                          int key_windows, bool keep_rope) {
  options.model = model.name;  // what codecs hold a run's model against (codec::check_codec_model)
  if (!keep_rope) options.rope = rope_spec(model.model->config());
  const auto kv = window_kv(model, windows);
  std::vector<codec::KvChunkView> views;
  for (const auto& window : kv.kv) views.push_back(window.all());
  if (key_windows > 0) {
    const auto first = kv.tokens.begin();
    options.key_metrics = key_metrics(*model.model, {first, first + std::min<ptrdiff_t>(key_windows, ssize(kv.tokens))},
                                      options.sink_tokens, kTransformKeyQueryPositions);
  }
  auto cal = codec::TransformCalibration::build(views, options);
  if (sensitivity_windows > 0) cal.set_row_weights(transform_row_weights(*model.model, kv, sensitivity_windows, cal));
  return cal;
}

}  // namespace kvstream::eval
