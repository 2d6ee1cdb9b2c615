// Measures the context sets of source "model" (profiling/model_context_request.h) on LibTorch: loads the
// model (or its fallback when the model's files are missing), cuts the dataset into contexts
// (profiling::text_contexts), and profiles each context (profiling::profile_context) unless the
// profile cache holds it. A cache entry is keyed by a hash of the model's fingerprint (shape and
// weight checksums), the context's token ids, the chunking, the codecs (and what their files hold),
// the levels, and the profiler and bitstream versions; entries keep their inputs, so a hash
// collision is measured again, not used. `transform` specs without cal= are fitted to the model
// first (profiling/fitted_transform.h).
#pragma once
#include "profiling/model_context_request.h"

namespace kvstream::profiling {

// A ModelContextMeasurer.
MeasuredContextSet measure_model_contexts(const ModelContextsRequest& request, const ProfileCache& cache,
                                          const ProgressLog& log);

}  // namespace kvstream::profiling
