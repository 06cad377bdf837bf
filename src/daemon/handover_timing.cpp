// Where a handover's time goes (see handover_timing.hpp).
#include "handover_timing.hpp"

#include "narration.hpp"

namespace baton {

std::optional<std::string> handover_timing::release_answered(time_point sent,
                                                             time_point answered) const {
  if (app_stopped_ == time_point{}) return std::nullopt;
  return release_timing_line(sent - app_stopped_, answered - app_stopped_, app_stopped_);
}

void handover_timing::acquire_won(time_point sent, time_point answered) {
  acquire_sent_ = sent;
  acquire_answered_ = answered;
  first_renewal_pending_ = true;
}

std::optional<std::string> handover_timing::app_start(time_point requested,
                                                      time_point returned) const {
  if (acquire_sent_ == time_point{}) return std::nullopt;
  return takeover_line(acquire_answered_ - acquire_sent_, requested - acquire_sent_,
                       returned - acquire_sent_, acquire_sent_);
}

std::optional<std::string> handover_timing::renewal_answered(time_point answered) {
  if (!first_renewal_pending_) return std::nullopt;
  first_renewal_pending_ = false;
  return first_renewal_line(answered - acquire_sent_);
}

}  // namespace baton
