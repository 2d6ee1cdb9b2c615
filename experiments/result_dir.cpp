#include "experiments/result_dir.h"

#include <ostream>

#include "common/atomic_file.h"
#include "experiments/figures.h"

namespace kvstream::experiments {

void ResultDir::write_json(const std::string& name, const nlohmann::json& json) const {
  common::write_file_atomically(file(name), [&](std::ostream& out) { out << json.dump(1) << "\n"; });
}

ResultDir::Finished ResultDir::finish(size_t runs, std::vector<SummaryRow> summary, nlohmann::json manifest,
                                      bool figures, std::ostream& log) const {
  Finished finished;
  finished.runs = runs;
  finished.summary = std::move(summary);
  write_summary_csv(file("summary.csv"), finished.summary);
  manifest["runs"] = finished.runs;
  write_json("manifest.json", manifest);
  if (figures) {
    std::string error;
    finished.figures_written = render_figures(dir_, error);
    if (!finished.figures_written) log << "warning: figures not drawn: " << error << std::endl;
  }
  return finished;
}

}  // namespace kvstream::experiments
