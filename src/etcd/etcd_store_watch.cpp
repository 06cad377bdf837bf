// The etcd store's watch: the election's keys read, then watched from the
// next revision on a second connection (watch_stream.hpp); each event told
// to the listener; a ping read that notices a dead server or a watch that
// missed a change; the watch moved to the member the calls moved to; and,
// after a failure or a compaction, watched again after a backoff.
#include "etcd_store_impl.hpp"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace baton {

void etcd_store::impl::arm_watch() {
  watch_state = wakeup_state::connecting;
  const auto generation = ++watch_generation;
  // The keys as they are, then every change after them.
  auto h = std::make_shared<std::function<void(store_error, bool)>>(
      [this, weak = shell.guard(), generation](store_error e, bool) {
        if (weak.expired() || shell.closed() || !e || generation != watch_generation) return;
        watch_failed(std::move(e));
      });
  request<bool>(h, "/v3/kv/range", range_request(keys.state, keys.end),
                [this, generation](const json& j) {
                  if (generation != watch_generation) return;
                  const auto hdr = read_header(j);
                  const auto view = read_view(hdr, read_range(j), keys);
                  seen(hdr);
                  seen_record(view.record);
                  saw_holder(view.lease);
                  saw_reservation(view.reserved);
                  open_stream(hdr.revision + 1);
                });
}

void etcd_store::impl::open_stream(std::int64_t from) {
  const auto weak = shell.guard();
  watch_stream::callbacks cb;
  cb.on_line = [this, weak](std::string_view line) {
    if (!weak.expired()) on_watch_line(line);
  };
  cb.on_closed = [this, weak](store_error e) {
    if (!weak.expired() && !shell.closed()) stream_failed(std::move(e));
  };
  if (stream) stream->stop();
  watched_revision = from - 1;
  suspect_revision = 0;
  watch_at = client->current_index();
  stream = watch_stream::create(io, client->current(), client->options().tls,
                                options.connect_timeout, std::move(cb));
  stream->start(watch_request(keys.state, keys.end, from), client->token());
}

void etcd_store::impl::on_watch_line(std::string_view line) {
  // An error said in the stream (a permission, a token gone).
  if (const auto j = json::parse(line, nullptr, false); !j.is_discarded()) {
    if (auto e = gateway_error(200, j, where())) return stream_failed(std::move(e));
  }
  watch_message m;
  try {
    m = read_watch_message(line);
  } catch (const std::exception& ex) {
    return stream_failed(
        {etcd_errc::unexpected_reply, "etcd watch " + where() + ": " + ex.what()});
  }
  const auto weak = shell.guard();
  seen_on_stream(m.hdr);
  if (m.canceled) {
    // Compacted past the revision asked for (or cancelled by the server):
    // no watch until it is armed again from a fresh read, so wake-ups are
    // untrusted meanwhile; the new watch's `created` says `released`, since
    // a release may have been missed.
    if (stream) stream->stop();
    stream.reset();
    ping_timer.cancel();
    subscribed_before = true;
    arm_watch();
    const std::string why =
        "etcd watch " + where() + ": cancelled" +
        (m.compact_revision > 0 ? " (etcd compacted its history to revision " +
                                      std::to_string(m.compact_revision) + ")"
         : m.cancel_reason.empty() ? ""
                                   : ": " + m.cancel_reason);
    // Last: the listener may destroy the store.
    shell.set_wakeups(false, why);
    return;
  }
  if (m.created) {
    watch_state = wakeup_state::subscribed;
    backoff = options.rewatch_backoff_initial;
    const bool again = subscribed_before;
    subscribed_before = true;
    schedule_ping(watch_generation);
    shell.set_wakeups(true, "");
    if (weak.expired() || shell.closed()) return;
    if (again) shell.emit(store_events::released{});
    if (weak.expired() || shell.closed()) return;
  }
  // The revisions at which a term began: a reservation deleted at one of
  // them was taken by its target, no wake-up.
  std::vector<std::int64_t> terms_begun;
  for (const auto& e : m.events) {
    const auto s = classify_event(e, keys, own_value);
    if (s.what == seen_event::kind::acquired) terms_begun.push_back(s.mod_revision);
  }
  for (const auto& e : m.events) {
    watched_revision = std::max(watched_revision, e.kv.mod_revision);
    if (e.kv.key == keys.lease) saw_holder(e.deleted ? e.prev : std::optional<key_value>(e.kv));
    const auto s = classify_event(e, keys, own_value);
    switch (s.what) {
      case seen_event::kind::none:
        break;
      case seen_event::kind::released:
        shell.emit(store_events::released{});
        break;
      case seen_event::kind::acquired: {
        // A term taken up again by a resume (lease.failsafe peers) keeps
        // its token, which the record put in the same txn names.
        std::optional<key_value> record;
        for (const auto& other : m.events) {
          if (other.kv.key == keys.failsafe && !other.deleted &&
              other.kv.mod_revision == s.mod_revision)
            record = other.kv;
        }
        shell.emit(store_events::acquired{s.holder, token_of_lease(e.kv, record)});
        break;
      }
      case seen_event::kind::record:
        seen_record(s.record);
        break;
      case seen_event::kind::release_marked:
        // A candidate waiting out that holder may go now.
        released_lease = s.lease;
        shell.emit(store_events::released{});
        break;
      case seen_event::kind::reserved:
        if (s.lease != 0) released_lease = s.lease;
        break;
      case seen_event::kind::unreserved:
        // The window is over: free for everyone.
        if (std::find(terms_begun.begin(), terms_begun.end(), s.mod_revision) ==
            terms_begun.end()) {
          shell.emit(store_events::released{});
        }
        break;
    }
    if (weak.expired() || shell.closed()) return;
  }
}

// A watch stream says nothing while nothing changes, so a dead server or
// a half-open connection looks like quiet. Every ping interval the keys
// are read on the call connection: a failure, or a change the watch has
// not reported by the next ping, ends the watch (wake-ups untrusted) and
// starts it again.
void etcd_store::impl::schedule_ping(std::uint64_t generation) {
  if (options.watch_ping_interval <= milliseconds::zero()) return;
  ping_timer.expires_after(options.watch_ping_interval);
  ping_timer.async_wait(
      [this, weak = shell.guard(), generation](const boost::system::error_code& ec) {
        if (ec || weak.expired() || shell.closed() || generation != watch_generation) return;
        ping(generation);
      });
}

void etcd_store::impl::ping(std::uint64_t generation) {
  auto h = std::make_shared<std::function<void(store_error, bool)>>([this, weak = shell.guard(),
                                                                     generation](store_error e,
                                                                                 bool) {
    if (weak.expired() || shell.closed() || !e || generation != watch_generation) return;
    watch_failed({e.code, "etcd watch " + where() + ": its check read failed: " + e.message()});
  });
  request<bool>(h, "/v3/kv/range", range_request(keys.state, keys.end),
                [this, generation](const json& j) {
                  if (generation != watch_generation) return;
                  const auto hdr = read_header(j);
                  seen(hdr);
                  std::int64_t newest = 0;
                  for (const auto& kv : read_range(j)) newest = std::max(newest, kv.mod_revision);
                  if (suspect_revision > watched_revision) {
                    return stream_failed(
                        {etcd_errc::connection_lost,
                         "etcd watch " + where() + ": the election's keys changed at revision " +
                             std::to_string(suspect_revision) + " and the watch did not say so"});
                  }
                  suspect_revision = newest > watched_revision ? newest : 0;
                  schedule_ping(generation);
                });
}

// The calls moved on from a member that failed them or cannot serve: the
// watch moves with them, so that the store uses one member at a time. A
// watch left on a frozen member keeps its stream open and silent, and
// would pass for a working one until a ping found a change it missed.
// Called from the client's outcome, before the failed call's handler: the
// listener is told from the executor, as it may destroy the store.
void etcd_store::impl::watch_where_the_calls_are() {
  if (!stream || !watching || shell.closed() || watch_at == client->current_index()) return;
  const auto& all = client->options().endpoints;
  const std::string why = "etcd watch " + all[watch_at].redacted() + ": moved to " + where() +
                          " with the calls, which found it failing";
  stream->stop();
  stream.reset();
  ping_timer.cancel();
  arm_watch();  // a new generation: answers for the old watch are dropped
  asio::post(io, [this, weak = shell.guard(), generation = watch_generation, why] {
    if (weak.expired() || shell.closed() || generation != watch_generation ||
        watch_state == wakeup_state::subscribed)
      return;
    shell.set_wakeups(false, why);
  });
}

// The watch stream itself failed: its member's row keeps the error.
void etcd_store::impl::stream_failed(store_error e) {
  if (watch_at < endpoint_errors.size()) endpoint_errors[watch_at] = e.message();
  watch_failed(std::move(e));
}

// The watch failed, by its stream or by one of its reads. A read is a call
// of the client, whose row the client's outcome already names (the member
// it asked, which need not be the stream's).
void etcd_store::impl::watch_failed(store_error e) {
  ++watch_generation;  // answers for the watch that failed are old news
  watch_state = wakeup_state::disconnected;
  if (stream) stream->stop();
  stream.reset();
  ping_timer.cancel();
  shell.note_failure(e);
  retry_timer.expires_after(backoff);
  backoff = std::min(backoff * 2, options.rewatch_backoff_max);
  retry_timer.async_wait([this, weak = shell.guard()](const boost::system::error_code& ec) {
    if (ec || weak.expired() || shell.closed()) return;
    arm_watch();
  });
  // Last: the listener may destroy the store.
  shell.set_wakeups(false, e.message());
}

void etcd_store::watch(event_listener listener) {
  auto& d = *impl_;
  if (!d.shell.set_listener(std::move(listener))) return;
  if (d.watching) return;
  d.watching = true;
  d.arm_watch();
}

}  // namespace baton
