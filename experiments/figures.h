// Draws a result directory's figures with plotting/plot.py (matplotlib). The interpreter is
// $KVSTREAM_PYTHON, else /usr/bin/python3 (Debian's python3-matplotlib lives there), else python3.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

namespace kvstream::experiments {

// Runs `plot.py DIR [--figures K,...] [--format F,...] [--width W]` (empty: plot.py's defaults: every
// kind the directory has data for, png and svg, screen size); returns false with the reason in `error` (no interpreter,
// matplotlib missing, plot.py failed: its message) so a sweep's results are kept even when figures
// cannot be drawn. What plot.py prints (the files written) goes to `written` when given.
bool render_figures(const std::filesystem::path& result_dir, std::string& error,
                    const std::vector<std::string>& kinds = {}, const std::vector<std::string>& formats = {},
                    const std::string& width = "", std::string* written = nullptr);

}  // namespace kvstream::experiments
