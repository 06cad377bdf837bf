// The daemon: an event loop, the store the configuration names (made by
// make_lease_store, seen only through the port), and the driver that runs the
// election on them.
#include "baton/daemon.hpp"

#include <spdlog/spdlog.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <exception>

#include "baton/store_check.hpp"
#include "baton/store_factory.hpp"
#include "driver.hpp"

namespace baton {
namespace {

// How long after start the store check runs. Its own connections (on
// PostgreSQL a server process each) competed with the first acquire for the
// store and the CPU: started at once, they cost a PostgreSQL start-up about
// 1 ms (17.1 -> 16.3 ms to the worker running, docs/benchmarks.md).
constexpr std::chrono::seconds store_check_delay{1};

// `baton check-store`'s hazards and failures, once, in the log: an operator
// who never ran the command still learns that the eviction policy can drop
// the lease or that the ACL lacks a command. The checks run beside the
// election (their own connections) and decide nothing.
void log_store_hazards(boost::asio::io_context& io, const config& cfg, driver& election) {
  async_check_store(io, cfg, [&election](check_report report) {
    for (const auto& line : report.lines) {
      if (line.verdict == check_verdict::hazard) {
        spdlog::warn("store check: {}: {}", line.topic, line.text);
      } else if (line.verdict == check_verdict::failure) {
        spdlog::error("store check: {}: {}", line.topic, line.text);
      }
    }
    // The check's connections (a TLS handshake's certificate checks, a
    // PostgreSQL session) were start-up's last one-off work.
    election.startup_work_done();
  });
}

}  // namespace

struct daemon::impl {
  config cfg;
  reload_source reload;
};

daemon::daemon(config cfg, reload_source reload)
    : impl_(std::make_unique<impl>(impl{std::move(cfg), std::move(reload)})) {}
daemon::~daemon() = default;

int daemon::run() {
  boost::asio::io_context io;
  std::unique_ptr<lease_store> store;
  try {
    store = make_lease_store(io, impl_->cfg);
  } catch (const std::exception& e) {
    spdlog::critical("cannot use store.kind {}: {}", impl_->cfg.store.kind, e.what());
    return 1;
  }
  driver election(io, impl_->cfg, *store, impl_->reload);
  if (!election.start()) return 1;
  boost::asio::steady_timer check_later(io, store_check_delay);
  check_later.async_wait([&](const boost::system::error_code& ec) {
    if (!ec) log_store_hazards(io, impl_->cfg, election);
  });
  io.run();
  return election.exit_code().value_or(0);
}

}  // namespace baton
