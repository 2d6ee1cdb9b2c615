#include "cli/model_backend.h"
#include "emulation/model/model_emulation.h"
#include "profiling/model_context_sets.h"

namespace kvstream::cli {

profiling::ModelContextMeasurer model_context_measurer() { return profiling::measure_model_contexts; }
RealKvPreparer real_kv_preparer() { return emulation::prepare_model_context; }

}  // namespace kvstream::cli
