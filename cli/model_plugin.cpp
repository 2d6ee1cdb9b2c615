// kvstream-models.so: the model backend (cli/model_backend.h), loaded by the kvstream binary on
// first use. Built only with LibTorch; everything that needs LibTorch is reached from here.
#include "cli/command.h"
#include "cli/model_backend.h"
#include "emulation/model/model_emulation.h"
#include "profiling/model_context_measurer.h"

extern "C" __attribute__((visibility("default"))) const kvstream::cli::ModelBackend* kvstream_model_backend() {
  using namespace kvstream;
  static const cli::ModelBackend backend{cli::kModelBackendVersion, cli::quality_main, cli::rd_main, cli::kv_export_main,
                                         cli::profile_prefill_main, cli::calibrate_main, cli::calibrate_ladder_main,
                                         profiling::measure_model_contexts,
                                         emulation::prepare_model_context};
  return &backend;
}
