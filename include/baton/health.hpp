// The daemon's own health, as /healthz, `baton health` and the status report
// it: a leader that believes it leads but has not renewed within its renew
// deadline is wedged (its deadline timer should have stopped the app by then,
// so the event loop did not run), which is what client-go's health adaptor
// checks. An event loop that does not run at all cannot answer, which the
// caller's timeout reports.
#pragma once

#include <string>

#include "baton/election_machine.hpp"

namespace baton {

struct health_verdict {
  bool healthy = true;
  /// "ok", or why not, for people.
  std::string reason = "ok";
};

health_verdict assess_health(const election_machine& machine, time_point now);

/// The one-line summary systemd shows in `systemctl status` (STATUS=).
std::string service_status_line(const election_machine& machine, const std::string& node_id);

}  // namespace baton
