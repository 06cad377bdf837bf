#include "expiry_proof.hpp"

#include <algorithm>

#include "baton/lease_drift.hpp"

namespace baton::etcd_detail {

expiry_proof::expiry_proof(std::int64_t stamped_term, double drift_factor)
    : stamped_term_(stamped_term), drift_factor_(drift_factor) {}

expiry_proof::step expiry_proof::next(const ttl_reading& r) {
  if (settled_) return last_step_;
  if (previous_ && r.sent < previous_->sent) return last_step_;
  if (r.ttl_seconds < 0 || stamped_term_ <= 0 || r.raft_term != stamped_term_ ||
      r.granted_seconds < shortest_granted_seconds) {
    settled_ = true;
    return stop();
  }
  const auto chained = previous_;
  previous_ = r;
  if (r.ttl_seconds >= 2) {
    // At least n s left: the last second begins no sooner than n - 1 s on.
    first_zero_.reset();
    return ask(r.sent + milliseconds((r.ttl_seconds - 1) * 1000));
  }
  if (r.ttl_seconds == 1) {
    first_zero_.reset();
    return ask(std::max(r.answered, r.sent + scan_interval));
  }
  // One second of etcd's, on our clock, and the longest link of the chain:
  // a renewal within it would leave etcd's answer at 1 s or more.
  const milliseconds second{1000};
  const auto one_second = second + lease_drift(second, drift_factor_);
  const milliseconds renewed_window{(r.granted_seconds - 1) * 1000};
  const auto longest_link = renewed_window - lease_drift(renewed_window, drift_factor_);
  const bool linked = first_zero_ && chained && chained->ttl_seconds == 0 &&
                      r.answered - chained->sent <= longest_link;
  if (!linked) {
    first_zero_ = r;
    return ask(r.answered + one_second);
  }
  if (r.sent >= first_zero_->answered + one_second) {
    last_step_ = {verdict::expired, {}};
    settled_ = true;
    return last_step_;
  }
  return ask(first_zero_->answered + one_second);
}

}  // namespace baton::etcd_detail
