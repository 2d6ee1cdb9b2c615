// Reno (RFC 5681) in the tcp link model's rounds: slow start, then one packet more per round;
// halving on loss.
#pragma once
#include "sim/tcp/congestion_control.h"

namespace kvstream::sim {

class RenoControl final : public LossBasedControl {
 public:
  using LossBasedControl::LossBasedControl;
  std::unique_ptr<CongestionControl> clone() const override { return std::make_unique<RenoControl>(*this); }

 private:
  void on_loss(const RoundSample&) override;
  void congestion_avoidance(const RoundSample&) override;
};

}  // namespace kvstream::sim
