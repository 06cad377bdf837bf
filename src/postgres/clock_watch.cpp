// The watch on the database's clock (see clock_watch.hpp).
#include "clock_watch.hpp"

#include <algorithm>
#include <cmath>

namespace baton::postgres_detail {
namespace {

std::int64_t micros(mono_clock::duration d) {
  return std::chrono::duration_cast<std::chrono::microseconds>(d).count();
}

}  // namespace

clock_watch::clock_watch(milliseconds ttl, double drift_factor)
    : ttl_(ttl), drift_factor_(std::isfinite(drift_factor) && drift_factor > 0 ? drift_factor : 0) {}

bool clock_watch::current(time_point sent) const {
  return db_us_.has_value() && sent - sent_ <= 2 * ttl_;
}

std::int64_t clock_watch::expected_us(time_point sent) const {
  if (!current(sent) || sent - since_ < ttl_) return 0;
  // The last look read the clock after it was sent; this one reads it after
  // it is sent, within about a round trip (the last one's).
  const double elapsed = static_cast<double>(micros(sent - sent_) + round_trip_.count());
  return *db_us_ + static_cast<std::int64_t>(std::ceil(elapsed * (1.0 + drift_factor_))) +
         micros(slack);
}

std::optional<milliseconds> clock_watch::observe(std::int64_t db_us, time_point sent,
                                                 time_point received) {
  if (db_us_ && sent < sent_) return std::nullopt;  // an older statement answered late
  const bool fresh = !current(sent);
  std::optional<milliseconds> step;
  if (!fresh) {
    // The last look read its time after it was sent, this one before it was
    // answered: at most that long passed between the two reads. Never less
    // than expected_us() allowed, so a row it let an acquire take is no step.
    const auto span = std::max(received - sent_, sent - sent_ + round_trip_);
    const double most = static_cast<double>(micros(span)) * (1.0 + drift_factor_) +
                        static_cast<double>(micros(slack));
    const double ahead = static_cast<double>(db_us - *db_us_) - most;
    if (ahead > 0) step = milliseconds(static_cast<milliseconds::rep>(std::ceil(ahead / 1000.0)));
  }
  db_us_ = db_us;
  sent_ = sent;
  round_trip_ = std::chrono::duration_cast<std::chrono::microseconds>(received - sent);
  if (fresh || step) since_ = received;
  return step;
}

milliseconds clock_watch::wait_left(time_point now) const {
  if (!db_us_) return ttl_;
  const auto left = since_ + ttl_ - now;
  return std::max(milliseconds(0), std::chrono::ceil<milliseconds>(left));
}

}  // namespace baton::postgres_detail
