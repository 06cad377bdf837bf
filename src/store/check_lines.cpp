#include "check_lines.hpp"

#include <cstdio>

namespace baton::store_check_detail {

std::string ms_text(std::chrono::nanoseconds d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f ms", static_cast<double>(d.count()) / 1e6);
  return buf;
}

check_line clock_line(std::chrono::milliseconds offset) {
  const auto size = offset.count() < 0 ? -offset.count() : offset.count();
  return {check_verdict::note, "clock",
          "the server's clock is " + std::to_string(size) + " ms " +
              (offset.count() < 0 ? "behind" : "ahead of") +
              " this host's (harmless: baton never compares them; validity runs on this host's "
              "monotonic clock, expiries on the server's)"};
}

}  // namespace baton::store_check_detail
