// The PostgreSQL store's watch: a second session LISTENs on the table's
// channel (listener.hpp), opened once the first statement was answered, and
// what it tells: releases, new terms, and whether wake-ups can be trusted.
#include <boost/asio/post.hpp>
#include <string>
#include <utility>

#include "postgres_store_impl.hpp"

namespace baton {

void postgres_store::watch(event_listener listener_fn) {
  auto& d = *impl_;
  if (!d.shell.set_listener(std::move(listener_fn))) return;
  if (d.watcher) return;
  postgres_detail::listener_options o;
  o.connection = d.conn_options;
  o.connection.application_name = "baton " + d.options.identity.node_id + " (listen)";
  o.connection.setup_sql.clear();
  o.channel = d.sql.table();
  o.election = d.options.identity.election;
  o.own_session = d.session;
  o.backoff_initial = d.options.relisten_backoff_initial;
  o.backoff_max = d.options.relisten_backoff_max;
  o.ping_interval = d.options.listen_ping_interval;
  const auto weak = d.shell.guard();
  o.on_release_or_relisten = [&d, weak] {
    if (weak.expired()) return;
    d.note_listening();
    d.shell.emit(store_events::released{});
  };
  o.on_acquired = [&d, weak](std::string holder, std::uint64_t token) {
    if (!weak.expired()) d.shell.emit(store_events::acquired{std::move(holder), token});
  };
  o.on_listening_change = [&d, weak](bool) {
    if (!weak.expired()) d.note_listening();
  };
  o.on_error = [&d, weak](store_error e) {
    if (!weak.expired()) d.note_watch_failure(std::move(e));
  };
  d.watcher = listener::create(d.io, std::move(o));
  // Decided once the caller's handler has run: the daemon calls watch()
  // right before its first acquire, which then goes first
  // (start_listening). A store with no statement under way listens at once.
  d.listen_after_first_answer = true;
  asio::post(d.io, [&d, weak] {
    if (weak.expired() || d.shell.closed()) return;
    if (d.answered_once || d.conn->current_state() == connection::state::disconnected) {
      d.start_listening();
    }
  });
}

// The listening session opens once the first statement was answered (or
// failed), when one was under way as watch() was called: opened beside the
// statement session, its connection (a server process forked, a backend's
// cold start) competed with the first acquire's for the server and the
// CPU. Nothing is missed meanwhile: a listener that starts listening
// reports a possibly missed release, and the standby tries again.
void postgres_store::impl::start_listening() {
  answered_once = true;
  if (watcher && listen_after_first_answer) {
    listen_after_first_answer = false;
    watcher->start();
  }
}

// Only a change of trust is news here: the failure that took the watch
// down was told already (note_watch_failure).
void postgres_store::impl::note_listening() {
  const bool trusted = current_wakeups() == wakeup_state::subscribed;
  if (trusted) told_watch_failure.reset();
  shell.set_wakeups_trust(trusted);
}

// A failure of the listening session, told once per kind of failure until
// it listens again: the session retries with a backoff, and a pooler or a
// missing privilege would otherwise repeat the same line every few seconds.
void postgres_store::impl::note_watch_failure(store_error e) {
  shell.note_failure(e);
  if (told_watch_failure == e.code) return;
  told_watch_failure = e.code;
  shell.set_wakeups(false, e.message());
}

wakeup_state postgres_store::impl::current_wakeups() const {
  if (!watcher) return wakeup_state::off;
  if (listen_after_first_answer) return wakeup_state::connecting;
  switch (watcher->current_state()) {
    case listener::state::listening: return wakeup_state::subscribed;
    case listener::state::connecting: return wakeup_state::connecting;
    case listener::state::waiting: return wakeup_state::disconnected;
    default: return wakeup_state::off;
  }
}

}  // namespace baton
