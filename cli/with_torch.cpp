#include "cli/model_backend.h"
#include "profiling/model_context_sets.h"

namespace kvstream::cli {

profiling::ModelContextMeasurer model_context_measurer() { return profiling::measure_model_contexts; }

}  // namespace kvstream::cli
