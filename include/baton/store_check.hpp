// `baton check-store`: connect to the store with exactly the settings `run`
// uses and report, one line per topic, whether baton can work there and what
// could hurt the election: reachability and TLS, the user and its ACL
// permissions, version, role and replicas, the eviction policy, persistence,
// latency against the ttl, the server's clock, and the lease itself. The
// daemon runs the same checks once at start and logs the hazards. The
// registry's command: it asks the kind in use (baton/store_kind.hpp) and
// prints the report (baton/check_report.hpp).
#pragma once

#include <boost/asio/io_context.hpp>
#include <functional>
#include <ostream>

#include "baton/check_report.hpp"
#include "baton/config.hpp"

namespace baton {

/// Runs every check for `cfg`'s store on `io` and calls `done` once with the
/// report. Each step is bounded by the store's connect and command timeouts.
void async_check_store(boost::asio::io_context& io, const config& cfg,
                       std::function<void(check_report)> done);

/// The command: runs the checks on an io_context of its own, prints one line
/// per check and a verdict on `out`, returns report.exit_code().
int check_store(const config& cfg, std::ostream& out);

}  // namespace baton
