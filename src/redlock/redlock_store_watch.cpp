// The Redlock store's events: an announcements' watch on every master, the
// merge of their copies into one stream of news (announcements.hpp), and
// whether wake-ups can be trusted (a watch on a majority of the masters).
#include <string_view>
#include <utility>

#include "redis/redis_reply.hpp"
#include "redlock_store_impl.hpp"

namespace baton {

void redlock_store::impl::start_watch() {
  for (std::size_t i = 0; i < size(); ++i) {
    redis_detail::subscriber_options opts;
    opts.connection = conn_options[i];
    opts.channel = keys.channel;
    opts.own_value = value;
    opts.backoff_initial = options.resubscribe_backoff_initial;
    opts.backoff_max = options.resubscribe_backoff_max;
    opts.ping_interval = options.subscription_ping_interval;
    // Every master announces a term it wrote and its release: the merge
    // says which copy is news. The node is told here, so the subscriber's
    // own wake-up after a resubscribe is left to the merge's rule.
    opts.release_filter = [this, weak = shell.guard()](std::string_view message) {
      if (weak.expired()) return false;
      if (announcements.released(message)) shell.emit(store_events::released{});
      return false;
    };
    opts.on_acquired = [this, weak = shell.guard()](const announced_term& term) {
      if (weak.expired()) return;
      if (announcements.acquired(term))
        shell.emit(store_events::acquired{term.holder, term.token});
    };
    opts.on_subscribed_change = [this, weak = shell.guard()](bool) {
      if (!weak.expired()) note_wakeups();
    };
    // A watch resubscribed: whether anything may have been missed is
    // decided by the count of watches (note_wakeups), not by one of them.
    members[i].watch = subscriber::create(io, std::move(opts), [] {});
    members[i].watch->start();
  }
}

std::size_t redlock_store::impl::subscribed() const {
  std::size_t n = 0;
  for (const auto& m : members) {
    if (m.watch && m.watch->current_state() == subscriber::state::subscribed) ++n;
  }
  return n;
}

// A release reaches every master the leader held, a majority: a watch on
// a majority shares at least one of them.
void redlock_store::impl::note_wakeups() {
  const auto news = announcements.watches(subscribed());
  if (!news.trust_changed) return;
  shell.set_wakeups(news.trusted, {});
  if (news.wake) shell.emit(store_events::released{});
}

wakeup_state redlock_store::impl::current_wakeups() const {
  if (!watching) return wakeup_state::off;
  if (subscribed() >= redlock_detail::majority_of(size())) return wakeup_state::subscribed;
  for (const auto& m : members) {
    if (m.watch && m.watch->current_state() == subscriber::state::subscribing) {
      return wakeup_state::connecting;
    }
  }
  return wakeup_state::disconnected;
}

}  // namespace baton
