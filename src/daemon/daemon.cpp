// The daemon: an event loop, the store the configuration names (made by
// make_lease_store, seen only through the port), and the driver that runs the
// election on them.
#include "baton/daemon.hpp"

#include <spdlog/spdlog.h>

#include <boost/asio/io_context.hpp>
#include <exception>

#include "baton/store_factory.hpp"
#include "driver.hpp"

namespace baton {

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
  io.run();
  return election.exit_code().value_or(0);
}

}  // namespace baton
