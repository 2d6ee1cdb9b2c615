#include "common/utc_time.h"

#include <ctime>

namespace kvstream::common {

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  ::gmtime_r(&now, &utc);  // thread-safe, unlike std::gmtime: runs and locks may ask at once
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

}  // namespace kvstream::common
