// The stand-ins of a build without LibTorch (cli/model_backend.h).
#include <stdexcept>

#include "cli/command.h"
#include "cli/model_backend.h"

namespace kvstream::cli {

namespace {

[[noreturn]] void needs_torch(const std::string& command) {
  throw std::runtime_error("kvstream " + command + " runs a model: this kvstream was built without LibTorch "
                           "(-DWITH_TORCH=OFF); build it with LibTorch (bash scripts/setup.sh)");
}

}  // namespace

int quality_main(const std::vector<std::string>&) { needs_torch("quality"); }
int kv_export_main(const std::vector<std::string>&) { needs_torch("kv-export"); }
int profile_prefill_main(const std::vector<std::string>&) { needs_torch("profile-prefill"); }

profiling::ModelContextMeasurer model_context_measurer() { return {}; }
RealKvPreparer real_kv_preparer() { return {}; }

}  // namespace kvstream::cli
