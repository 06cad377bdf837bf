// `baton check-store`: connect to the store with exactly the settings `run`
// uses and report, one line per topic, whether baton can work there and what
// could hurt the election: reachability and TLS, the user and its ACL
// permissions, version, role and replicas, the eviction policy, persistence,
// latency against the ttl, the server's clock, and the lease itself. The
// daemon runs the same checks once at start and logs the hazards.
#pragma once

#include <boost/asio/io_context.hpp>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "baton/config.hpp"

namespace baton {

enum class check_verdict {
  ok,       ///< as baton needs it
  note,     ///< worth knowing, no risk to the election
  hazard,   ///< works, but can cost a leader or let one be lost early
  failure,  ///< baton cannot work with this store as it is
};

/// "ok", "note", "hazard", "FAIL".
const char* to_string(check_verdict v);

struct check_line {
  check_verdict verdict = check_verdict::ok;
  /// What was checked: "reachable", "tls", "acl", ...; for a Redlock master
  /// prefixed with "master N ".
  std::string topic;
  std::string text;
};

struct check_report {
  std::vector<check_line> lines;
  /// 2 when a line is a failure (cannot connect, refused, bad setup), 1 when
  /// one is a hazard, 0 otherwise.
  int exit_code() const;
};

/// Runs every check for `cfg`'s store on `io` and calls `done` once with the
/// report. Each step is bounded by the store's connect and command timeouts.
void async_check_store(boost::asio::io_context& io, const config& cfg,
                       std::function<void(check_report)> done);

/// The command: runs the checks on an io_context of its own, prints one line
/// per check and a verdict on `out`, returns report.exit_code().
int check_store(const config& cfg, std::ostream& out);

}  // namespace baton
