// Draws a result directory's figures with plotting/plot.py (matplotlib). The interpreter is
// $KVSTREAM_PYTHON, else /usr/bin/python3 (Debian's python3-matplotlib lives there), else python3.
#pragma once
#include <filesystem>
#include <string>

namespace kvstream::experiments {

// Runs `plot.py DIR`; returns false with the reason in `error` (no interpreter, matplotlib missing,
// plot.py failed) so a sweep's results are kept even when figures cannot be drawn.
bool render_figures(const std::filesystem::path& result_dir, std::string& error);

}  // namespace kvstream::experiments
