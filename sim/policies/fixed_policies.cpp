// Policies that ignore the network: one level for every chunk, or text for every chunk.
#include <stdexcept>

#include "sim/policies/policies.h"

namespace kvstream::sim::policies {

namespace {
class Always final : public Policy {
 public:
  explicit Always(int choice) : choice_(choice) {}
  int choose(const DecisionContext&) override { return choice_; }

 private:
  int choice_;
};
}  // namespace

std::unique_ptr<Policy> make_fixed(const Spec& spec, const ContextProfile& profile) {
  const std::string level = spec.string("level", "");
  if (level.empty()) spec.fail("expected fixed:<level name>");
  return std::make_unique<Always>(profile.level_index(level));
}

std::unique_ptr<Policy> make_text(const Spec& spec, const ContextProfile&) {
  spec.only({});
  return std::make_unique<Always>(kText);
}

std::unique_ptr<Policy> make_quant8(const Spec& spec, const ContextProfile& profile) {
  spec.only({});
  for (const char* name : {"quant:bits=8", "quant8"})
    for (size_t l = 0; l < profile.levels.size(); ++l)
      if (profile.levels[l].name == name) return std::make_unique<Always>(static_cast<int>(l));
  throw std::invalid_argument("policy quant8: profile \"" + profile.name + "\" has no level \"quant:bits=8\"");
}

}  // namespace kvstream::sim::policies
