// The current time in UTC, as results and lock files record it.
#pragma once
#include <string>

namespace kvstream::common {

std::string utc_now();  // 2026-12-03T10:00:00Z

}  // namespace kvstream::common
