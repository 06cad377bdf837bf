// redlock_store: the rounds over the masters (see redlock_store.hpp). Each
// call is one small state object shared by the completions of its per-master
// commands; the first completion that settles the round answers the caller,
// later ones only update what status() shows about their master. Completions
// hold a weak pointer to the store: after destruction nothing runs, after
// close() every call completes once with operation_aborted.
//
// This file: the store made, a script run on one master, the per-master
// bookkeeping and a round's error; then the port's calls, close() and
// status() with a row per master. The rounds themselves are in a file per
// job (redlock_store_impl.hpp lists them).
#include "redlock_store.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include "redis/redis_error.hpp"
#include "redlock_error.hpp"
#include "redlock_store_impl.hpp"

namespace baton {

redlock_store::impl::impl(asio::io_context& context, redlock_store_options opts)
    : io(context),
      options(std::move(opts)),
      shell(context),
      value(process_lease_value(options.identity.node_id)),
      keys(options.identity.election),
      ttl_ms(std::to_string(options.identity.ttl.count())) {
  for (std::size_t i = 0; i < options.masters.size(); ++i) {
    redis_detail::connection_options c;
    c.endpoint = options.masters[i];
    if (!options.password.empty()) c.endpoint.password = options.password;
    c.password_file = options.password_file;
    c.connect_timeout = options.connect_timeout;
    c.command_timeout = options.command_timeout;
    c.transport = options.transport;
    conn_options.push_back(c);

    redis_detail::node_options n;
    n.connection = c;
    n.token_key = keys.token;
    n.fence_key = keys.fence;
    n.ttl = options.identity.ttl;
    n.on_reset = [this, weak = shell.guard(), i](const std::string& why) {
      if (!weak.expired()) member_reset(i, why, false);
    };
    n.on_failure = [this, weak = shell.guard(), i](store_error e) {
      if (!weak.expired()) member_failed(i, e);
    };
    member m;
    m.endpoint = c.endpoint.redacted();
    m.node = redis_node::create(io, std::move(n));
    members.push_back(std::move(m));
  }
  // The options copy must not keep secrets longer than needed.
  options.password.clear();
  for (auto& m : options.masters) m.password.clear();
}

redlock_store::impl::~impl() {
  shell.retire();
  for (auto& m : members) {
    m.node->close();
    if (m.watch) m.watch->stop();
  }
}

// Runs `script` on master `i`; `done` runs only while the store lives.
// Any reply ends the master's last error (`done` may record a new one).
void redlock_store::impl::eval(std::size_t i, const redis_detail::lua_script& script,
                               std::vector<std::string> script_keys, std::vector<std::string> args,
                               std::function<void(command_result)> done) {
  members[i].node->eval(
      script, std::move(script_keys), std::move(args),
      [this, i, weak = shell.guard(), done = std::move(done)](command_result r) {
        if (weak.expired()) return;
        if (!r.ec) members[i].state.answered();
        done(std::move(r));
      });
}

void redlock_store::impl::member_failed(std::size_t i, const store_error& e) {
  members[i].state.failed(e.message());
}

void redlock_store::impl::member_reset(std::size_t i, const std::string& why, bool record_missing) {
  members[i].state.fenced(why, mono_clock::now(), options.identity.ttl);
  const auto text = "master " + members[i].endpoint + ": " + why;
  shell.report_reset(store_events::reset{text, record_missing, members[i].endpoint});
}

// A transport error or an unparseable reply of master `i`, kept for the
// round's error and for status().
void redlock_store::impl::failed_in(round_failures& f, std::size_t i, store_error e) {
  member_failed(i, e);
  f.add(i, std::move(e));
}

// The round's error: when no master answered and all that failed failed
// alike, their own code (so an unreachable quorum is `unavailable`);
// otherwise no_quorum.
// `answered`: whether any master gave a usable answer in the round.
store_error redlock_store::impl::round_error(const round_failures& f, bool answered,
                                             const std::string& summary) {
  store_error out;
  bool alike = !answered;
  for (const auto& [i, e] : f.list) {
    if (std::string(store_error_kind(e.code)) != store_error_kind(f.list.front().second.code)) {
      alike = false;
    }
  }
  out.code = alike && !f.list.empty() ? f.list.front().second.code
                                      : std::error_code(redlock_errc::no_quorum);
  out.detail = summary;
  for (const auto& [i, e] : f.list) out.detail += "; " + members[i].endpoint + ": " + e.message();
  return shell.note_failure(std::move(out));
}

std::string redlock_store::impl::of_masters(std::size_t k) const {
  return std::to_string(k) + " of " + std::to_string(size()) + " masters (a majority is " +
         std::to_string(redlock_detail::majority_of(size())) + ")";
}

redlock_store::redlock_store(asio::io_context& io, redlock_store_options options) {
  const auto& id = options.identity;
  if (options.masters.empty()) throw std::invalid_argument("redlock_store: no masters");
  if (options.masters.size() > 7) {
    throw std::invalid_argument("redlock_store: at most 7 masters, got " +
                                std::to_string(options.masters.size()));
  }
  require_valid_identity(id, "redlock_store");
  impl_ = std::make_shared<impl>(io, std::move(options));
}

redlock_store::~redlock_store() = default;

const store_identity& redlock_store::identity() const { return impl_->options.identity; }

void redlock_store::async_acquire(acquire_handler handler) {
  if (impl_->shell.reject_if_closed(handler)) return;
  impl_->acquire(std::move(handler));
}

void redlock_store::async_renew(renew_handler handler) {
  if (impl_->shell.reject_if_closed(handler)) return;
  impl_->renew(std::move(handler));
}

void redlock_store::async_release(release_handler handler) {
  if (impl_->shell.reject_if_closed(handler)) return;
  impl_->release(std::move(handler));
}

void redlock_store::async_hand_over(const std::string& to_node, milliseconds window,
                                    release_handler handler) {
  auto& d = *impl_;
  if (d.shell.reject_if_closed(handler)) return;
  if (d.shell.reject_input(redis_detail::hand_over_target_problem(to_node), handler)) return;
  d.release(std::move(handler), {to_node, std::to_string(std::max<long long>(window.count(), 0)),
                                 d.options.identity.node_id});
}

void redlock_store::async_candidates(candidates_handler handler) {
  if (impl_->shell.reject_if_closed(handler)) return;
  impl_->candidates(std::move(handler));
}

void redlock_store::register_cooldown(milliseconds cooldown) {
  if (impl_->shell.closed() || cooldown <= milliseconds(0)) return;
  impl_->register_cooldown(cooldown);
}

void redlock_store::update_card(std::string card) {
  impl_->options.identity.card = std::move(card);
  impl_->priority = redis_detail::registration_argument(impl_->options.identity.priority,
                                                        impl_->options.identity.card);
}

void redlock_store::async_look(look_handler handler) {
  if (impl_->shell.reject_if_closed(handler)) return;
  impl_->look(std::move(handler));
}

void redlock_store::async_create_record(record_handler handler) {
  if (impl_->shell.reject_if_closed(handler)) return;
  impl_->create_record(std::move(handler));
}

void redlock_store::watch(event_listener listener) {
  auto& d = *impl_;
  if (!d.shell.set_listener(std::move(listener))) return;
  if (d.watching) return;
  d.watching = true;
  d.start_watch();
}

failsafe_calls* redlock_store::failsafe() { return &impl_->failsafe_calls_of; }

void redlock_store::close() {
  auto& d = *impl_;
  if (!d.shell.close()) return;
  for (auto& m : d.members) {
    m.node->close();
    if (m.watch) m.watch->stop();
  }
}

store_status redlock_store::status() const {
  const auto& d = *impl_;
  store_status s;
  s.kind = "redlock";
  s.label = "Redlock";
  std::size_t connected = 0;
  bool connecting = false;
  const auto now = mono_clock::now();
  for (const auto& m : d.members) {
    store_member_status ms;
    ms.endpoint = m.endpoint;
    ms.link = link_of(m.node->current_state());
    ms.holds_lease = m.state.holds_lease();
    ms.last_error = m.state.last_error();
    ms.fence = m.state.fence_at(now);
    if (ms.link == link_state::connected) ++connected;
    if (ms.link == link_state::connecting) connecting = true;
    s.endpoint += (s.endpoint.empty() ? "" : ",") + m.endpoint;
    s.members.push_back(std::move(ms));
  }
  // Linked while a majority is: that is what the rounds need.
  s.link = connected >= redlock_detail::majority_of(d.size()) ? link_state::connected
           : connecting                                        ? link_state::connecting
                                                               : link_state::disconnected;
  s.wakeups = d.current_wakeups();
  d.shell.fill_status(s);
  return s;
}

}  // namespace baton
