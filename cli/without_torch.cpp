// The stand-ins of a build without LibTorch (cli/model_backend.h).
#include <stdexcept>

#include "cli/command.h"
#include "cli/model_backend.h"

namespace kvstream::cli {

namespace {

Command needs_torch(const std::string& name) {
  return {name, "(needs a build with LibTorch)", [name](const std::vector<std::string>&) -> int {
            throw std::runtime_error("kvstream " + name + " runs a model: this kvstream was built without LibTorch "
                                     "(-DWITH_TORCH=OFF); build it with LibTorch (bash scripts/setup.sh)");
          }};
}

}  // namespace

Command quality_command() { return needs_torch("quality"); }
Command kv_export_command() { return needs_torch("kv-export"); }
Command profile_prefill_command() { return needs_torch("profile-prefill"); }

profiling::ModelContextMeasurer model_context_measurer() { return {}; }

}  // namespace kvstream::cli
