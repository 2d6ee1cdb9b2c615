// The transform calibration packed for the GPU kernels (gpu_transform_kernels.h), at one
// distortion and for one chunk: per row the kept components' classes and bases, the step, where its
// symbols start, the rANS groups, and the chunk's RoPE angles. Shared by the GPU encoder and decoder
// wrappers.
#pragma once
#include <cstdint>
#include <vector>

#include "codec/transform/gpu_transform_kernels.h"
#include "codec/transform/rope.h"
#include "codec/transform/transform_payload.h"

namespace kvstream::codec {

class PackedTransformModel {
 public:
  // `plans`: the 2L rows' plans at the chunk's distortion, `groups` the chunk's; sinks and t0 as the
  // bitstream has them.
  PackedTransformModel(const TransformCalibration& cal, const std::vector<TransformRowPlan>& plans,
                       const TransformGroups& groups, const KvShape& shape, int64_t t0, int sinks);
  // Pointers into this object: valid while it lives.
  const GpuTransformModel& view() const { return view_; }

 private:
  RopeAngles angles_;
  std::vector<int> kept_;
  std::vector<double> step_;
  std::vector<uint8_t> classes_;
  std::vector<uint16_t> class_cdf_;
  std::vector<uint64_t> symbol_start_, basis_start_;
  TransformGroups groups_;
  std::vector<float> mean_, basis_, synthesis_;  // synthesis_: empty when every row's basis is its own
  GpuTransformModel view_;
};

}  // namespace kvstream::codec
