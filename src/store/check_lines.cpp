#include "check_lines.hpp"

#include <boost/asio/ip/address.hpp>
#include <cstdio>

namespace baton::store_check_detail {

bool is_loopback_host(const std::string& host) {
  if (host == "localhost") return true;
  // An IPv6 address may come in brackets, as URLs write it.
  const bool bracketed = host.size() > 2 && host.front() == '[' && host.back() == ']';
  boost::system::error_code ec;
  const auto address =
      boost::asio::ip::make_address(bracketed ? host.substr(1, host.size() - 2) : host, ec);
  return !ec && address.is_loopback();
}

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
