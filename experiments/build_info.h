// What a result says about where it was made: this build (git revision, compiler, library versions)
// and this machine (host, CPU, cores), and the time. Result manifests and measured hardware
// profiles record it.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace kvstream::experiments {

// {"git_revision", "compiler", "libraries": {"libtorch", "boost", "zstd", "nlohmann_json"}, "host",
// "cpu", "cores"}; the revision ends in "-dirty" when tracked files differ from it.
nlohmann::json build_and_host_info();

std::string utc_date();  // 2026-12-03 (common::utc_now's date)

}  // namespace kvstream::experiments
