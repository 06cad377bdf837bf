// redis_store: the lease operations as Lua scripts over one pipelined
// connection, plus the announcements' watch on a second one. Every completion
// passes through a guard that drops it when the store is gone and turns it
// into operation_aborted once close() was called, so each handler runs exactly
// once (or, after destruction, never).
//
// Data loss: the command connection is a redis_node, which fences the
// election when Redis's run_id changes (a restart or a failover; see
// redis_node.hpp; on Sentinel with replica_ack all, not for a promotion that
// kept every acknowledged write). The acquire script itself does the same when it finds the
// counter missing. Either way the watcher hears a store_events::reset.
//
// This file: the store made (its node, and a sentinel's word that the master
// moved), a script run on the node, the resets told; then the port's frame,
// close() and status(). The other steps are in a file per job
// (redis_store_impl.hpp lists them).
#include "redis_store.hpp"

#include <string>
#include <utility>

#include "locating_transport.hpp"
#include "redis_store_impl.hpp"

namespace baton {
namespace {

// Whether a member's redacted URL names the server at `peer` ("host:port").
bool names_server(const std::string& endpoint, const std::string& peer) {
  if (peer.empty()) return false;
  const auto scheme = endpoint.find("://");
  std::string rest = scheme == std::string::npos ? endpoint : endpoint.substr(scheme + 3);
  if (const auto user = rest.rfind('@'); user != std::string::npos) rest = rest.substr(user + 1);
  return rest == peer;
}

}  // namespace

redis_store::impl::impl(asio::io_context& context, redis_store_options opts)
    : io(context),
      options(std::move(opts)),
      shell(context),
      value(process_lease_value(options.identity.node_id)),
      keys(options.identity.election),
      ttl_ms(std::to_string(options.identity.ttl.count())),
      priority(redis_detail::registration_argument(options.identity.priority,
                                                   options.identity.card)) {
  conn_options.endpoint = options.endpoint;
  if (!options.password.empty()) conn_options.endpoint.password = options.password;
  // The options copy must not keep the secret around longer than needed.
  options.password.clear();
  options.endpoint.password.clear();
  conn_options.password_file = options.password_file;
  conn_options.connect_timeout = options.connect_timeout;
  conn_options.command_timeout = options.command_timeout;
  conn_options.transport = options.locator
                               ? redis_detail::locating_transport_factory(options.locator)
                               : options.transport;
  // Only the command connection asks who the server is; the watch
  // connection has nothing to protect.
  redis_detail::node_options node_options;
  node_options.connection = conn_options;
  // A located master may have been demoted since it was named.
  node_options.connection.confirm_master = options.locator != nullptr;
  node_options.locator = options.locator;
  if (options.locator) {
    options.locator->set_switch_listener([this, weak = shell.guard()](const std::string& why) {
      if (!weak.expired() && !shell.closed()) on_switch(why);
    });
  }
  node_options.token_key = keys.token;
  node_options.fence_key = keys.fence;
  node_options.ttl = options.identity.ttl;
  node_options.on_reset = [this, weak = shell.guard()](const std::string& why) {
    if (weak.expired() || shell.closed()) return;
    reset_told_for = node->server_id();
    report_reset(why);
  };
  if (options.replicated) {
    node_options.switch_keys = {keys.token, keys.fence, keys.epoch, keys.replicas, keys.acked};
    node_options.switch_args = {options.ack.on() ? ack_requirement() : std::string(),
                                options.acknowledged_promotion ? "acked" : ""};
  }
  node_options.on_promotion = [this, weak = shell.guard()](const std::string& why) {
    if (weak.expired() || shell.closed()) return;
    // Nothing is held back, so watchers hear nothing; status() shows it.
    shell.note_reset("failover (" + why + ") to a replica that had every acknowledged grant "
                     "and renewal: nothing held back");
  };
  node_options.on_failure = [this, weak = shell.guard()](store_error e) {
    if (!weak.expired() && !shell.closed()) shell.note_failure(std::move(e));
  };
  node = redis_node::create(io, std::move(node_options));
}

redis_store::impl::~impl() {
  shell.retire();
  node->close();
  if (watch) watch->stop();
  if (options.locator) options.locator->close();
}

// A sentinel says the master moved: both connections start over there.
void redis_store::impl::on_switch(const std::string& why) {
  shell.note_failure({redis_errc::not_master, why});
  node->reconnect(why);
  if (watch) watch->restart(why);
}

// Runs a script on the node; `done` runs only while the store is alive.
void redis_store::impl::eval(const lua_script& script, std::vector<std::string> script_keys,
                             std::vector<std::string> args,
                             std::function<void(command_result)> done) {
  node->eval(script, std::move(script_keys), std::move(args),
             [weak = shell.guard(), done = std::move(done)](command_result r) {
               if (!weak.expired()) done(std::move(r));
             });
}

void redis_store::impl::report_reset(std::string why, bool record_missing) {
  shell.report_reset(store_events::reset{std::move(why), record_missing, {}});
}

// A reset the acquire script found. One failover can be seen twice by a
// candidate that was connected to the old master: the node's run_id check
// when it reconnects to the new one, then the script's epoch check at its
// first acquire there. Told once: the second is the same event.
void redis_store::impl::report_script_reset(const acquire_script_reply& a) {
  const bool same_failover = !a.record_missing && !reset_told_for.empty() &&
                             reset_told_for == node->server_id();
  if (same_failover) {
    shell.note_reset(a.reset_why);
    return;
  }
  report_reset(a.reset_why, a.record_missing);
}

redis_store::redis_store(asio::io_context& io, redis_store_options options) {
  const auto& id = options.identity;
  require_valid_identity(id, "redis_store");
  impl_ = std::make_unique<impl>(io, std::move(options));
}

redis_store::~redis_store() = default;

const store_identity& redis_store::identity() const { return impl_->options.identity; }

void redis_store::close() {
  auto& d = *impl_;
  if (!d.shell.close()) return;
  d.node->close();
  if (d.watch) d.watch->stop();
  if (d.options.locator) d.options.locator->close();
}

const std::string& redis_store::lease_value() const { return impl_->value; }

failsafe_calls* redis_store::failsafe() { return &impl_->failsafe_calls_of; }

store_status redis_store::status() const {
  const auto& d = *impl_;
  store_status s;
  s.kind = d.options.kind;
  s.label = d.options.label;
  if (d.options.locator) {
    // Where the master was found, and through what.
    const auto& peer = d.node->peer();
    s.endpoint = redis_detail::located_endpoint_text(d.options.locator->describe(), peer);
    s.members = d.options.locator->sources();
    // A seed node that is the master baton works with is in use through the
    // command connection, though its own (asked only to find the master)
    // may never have been opened: show the link that is in use.
    for (auto& m : s.members) {
      if (m.role == "seed" && names_server(m.endpoint, peer)) m.link = redis_detail::link_of(d.node->current_state());
    }
  } else {
    s.endpoint = d.conn_options.endpoint.redacted();
  }
  s.link = redis_detail::link_of(d.node->current_state());
  s.wakeups = d.current_wakeups();
  d.shell.fill_status(s);
  return s;
}

}  // namespace baton
