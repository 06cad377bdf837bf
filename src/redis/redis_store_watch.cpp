// The Redis store's events: the announcements' watch on its own connection,
// the channel it listens on (a large election's back runners have their
// own), and whether its wake-ups can be trusted.
#include <string>
#include <utility>

#include "redis_store_impl.hpp"

namespace baton {

// A large election's back runner listens on the back runners' channel,
// where nothing is announced: a release then wakes the front runners
// only. Every other answer (a front runner's, a grant, a small election's)
// listens on the events channel. A user whose ACL lacks the back runners'
// channel stays on the events channel (on_watch_failure).
void redis_store::impl::follow_runner(const acquire_answer& a) {
  if (!watch || back_channel_refused) return;
  watch->move_to(a.back_runner ? keys.back_channel : keys.channel);
}

void redis_store::impl::on_watch_failure() {
  if (!watch || watch->channel() != keys.back_channel) return;
  if (watch->last_failure().find("NOPERM") == std::string::npos) return;
  back_channel_refused = true;
  watch->move_to(keys.channel);
}

// The subscriber calls back after every (re)subscribe, since a release may
// have gone unheard meanwhile, and for every foreign release.
void redis_store::impl::on_release_or_resubscribe() {
  note_wakeups();
  shell.emit(store_events::released{});
}

// Wake-ups are trusted while the watch is subscribed; say so on a change.
// A failure is told once per distinct reason, so that a watch the server
// refuses (an ACL without SUBSCRIBE) is logged with its cause, not retried
// in silence.
void redis_store::impl::note_wakeups() {
  const bool trusted = current_wakeups() == wakeup_state::subscribed;
  shell.set_wakeups(trusted, trusted || !watch ? std::string() : watch->last_failure());
}

wakeup_state redis_store::impl::current_wakeups() const {
  if (!watch) return wakeup_state::off;
  switch (watch->current_state()) {
    case subscriber::state::subscribed: return wakeup_state::subscribed;
    case subscriber::state::subscribing: return wakeup_state::connecting;
    case subscriber::state::waiting: return wakeup_state::disconnected;
    default: return wakeup_state::off;
  }
}

void redis_store::watch(event_listener listener) {
  auto& d = *impl_;
  if (!d.shell.set_listener(std::move(listener))) return;
  if (d.watch) return;
  redis_detail::subscriber_options opts;
  opts.connection = d.conn_options;
  opts.channel = d.keys.channel;
  opts.own_value = d.value;
  opts.backoff_initial = d.options.resubscribe_backoff_initial;
  opts.backoff_max = d.options.resubscribe_backoff_max;
  opts.ping_interval = d.options.subscription_ping_interval;
  opts.sharded = d.options.sharded_pubsub;
  opts.on_acquired = [&d, weak = d.shell.guard()](const announced_term& term) {
    if (!weak.expired()) d.shell.emit(store_events::acquired{term.holder, term.token});
  };
  opts.on_subscribed_change = [&d, weak = d.shell.guard()](bool subscribed) {
    if (weak.expired()) return;
    if (!subscribed) d.on_watch_failure();
    d.note_wakeups();
  };
  d.watch = subscriber::create(d.io, std::move(opts), [&d, weak = d.shell.guard()] {
    if (!weak.expired()) d.on_release_or_resubscribe();
  });
  d.watch->start();
}

}  // namespace baton
