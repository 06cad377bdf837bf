// The PostgreSQL store's acquire: one statement (with lease.failsafe peers,
// the mode's), and what its answer saw: a reset, a restart or a change of
// server (answer_seen), and the database's clock (clock_seen).
#include <algorithm>
#include <boost/asio/post.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <utility>

#include "postgres_store_impl.hpp"

namespace baton {

void postgres_store::async_acquire(acquire_handler handler) {
  auto& d = *impl_;
  if (d.shell.reject_if_closed(handler)) return;
  // With lease.failsafe peers every acquire is the mode's: one that skipped
  // the record would grant past a term that may still run (F6).
  if (d.failsafe_on()) {
    d.acquire(failsafe_acquire{}, std::move(handler));
    return;
  }
  d.acquire(std::nullopt, std::move(handler));
}

void postgres_store::impl::acquire(std::optional<failsafe_acquire> fa, acquire_handler handler) {
  auto& d = *this;
  const auto& id = d.options.identity;
  // When it was sent and the server time it may expect: set as it is made.
  struct clock_note {
    time_point sent{};
    std::int64_t expected = 0;
  };
  auto note = std::make_shared<clock_note>();
  auto make = [&d, &id, seen = d.seen, note, fa = std::move(fa)] {
    impl::statement s{d.sql.acquire(d.registry, fa.has_value()),
                      {id.election, id.node_id, d.session, d.ttl_ms, d.sql.table(), seen.cluster,
                       seen.wal, std::to_string(seen.token)}};
    if (d.registry) {
      s.params.push_back(std::to_string(id.priority));
      s.params.push_back(id.card);
    }
    note->sent = mono_clock::now();
    note->expected = d.watch.expected_us(note->sent);
    s.params.push_back(std::to_string(note->expected));
    if (fa) {
      const auto& p = fa->promise;
      s.params.insert(s.params.end(),
                      {fa->may_win ? "true" : "false", std::to_string(fa->cleared_token),
                       id.peer_address, postgres_detail::failsafe_peers_json(fa->list.peers),
                       std::to_string(fa->list.seq), p ? p->leader : std::string(),
                       std::to_string(p ? p->token : 0),
                       std::to_string(p ? std::max<long long>(p->remaining.count(), 0) : 0)});
    }
    return s;
  };
  d.run(std::move(make), [&d, note, handler = std::move(handler)](query_result r) {
    d.finish<acquire_answer>(r, handler, [&](const auto& rows) {
      auto parsed = postgres_detail::parse_acquire_rows(rows);
      if (parsed.error) {
        handler(d.shell.note_failure(parsed.error), acquire_answer{});
        return;
      }
      d.clock_seen(parsed, note->sent, note->expected, mono_clock::now());
      const bool won = parsed.answer.acquired();
      if (won) {
        d.token = parsed.answer.token;
        d.term_token = parsed.answer.token;
      }
      d.answer_seen(parsed);
      handler(store_error{}, std::move(parsed.answer));
      // A term's release is its first and only one on this session: without
      // this its prepare step would be a round trip more in every handover.
      // After the answer is handed on (posted), so the app's start never
      // waits for it.
      if (won) {
        asio::post(d.io, [&d, weak = d.shell.guard()] {
          if (weak.expired()) return;
          d.conn->prepare_ahead(d.sql.renew(d.registry, d.failsafe_on()));
          d.conn->prepare_ahead(d.sql.release(d.failsafe_on()));
        });
      }
    });
  });
}

// Reads what an acquire found: a reset this statement found (and set the
// hold-back for), a restart that kept every term, or a change of server
// another candidate found first; then remembers the server and the row.
void postgres_store::impl::answer_seen(postgres_detail::parsed_acquire& parsed) {
  if (parsed.epoch.empty()) return;  // the row is being created: no answer yet
  const auto cluster = postgres_detail::epoch_cluster(parsed.epoch);
  const auto mark = postgres_detail::epoch_reset_mark(parsed.epoch);
  const auto cluster_before = std::exchange(seen.cluster, cluster);
  const auto mark_before = std::exchange(seen.reset_mark, mark);
  seen.wal = parsed.wal_position;
  seen.token = parsed.answer.token;
  if (parsed.reset) {
    report_reset(parsed.missing ? "the lease row of election " + options.identity.election +
                                      " was missing"
                                : parsed.lost_why,
                 parsed.missing);
  } else if (parsed.restarted) {
    // Not a reset: the terms are kept. Only a free lease waits (see
    // lease_sql.hpp); say why, since nobody lost anything.
    if (parsed.answer.outcome == acquire_outcome::held_back) {
      parsed.answer.why = "PostgreSQL restarted (now " + postgres_detail::epoch_server(parsed.epoch) +
                          ") while the lease was free: nobody takes it for one ttl, in case a "
                          "term the server no longer has is still at work";
    }
  } else if (!cluster_before.empty() && cluster_before != cluster) {
    // Another candidate's acquire found the change first (and set the
    // hold-back); this store hears of it here.
    report_reset("the server changed from system/timeline " + cluster_before + " to " + cluster,
                 false);
  } else if (!cluster_before.empty() && !mark.empty() && mark != mark_before) {
    // Another candidate found the data gone back (or the row missing) and
    // marked the row when it lifted the token.
    report_reset("another candidate found the data gone back and lifted the lease row's token "
                 "to " + mark,
                 false);
  }
}

// Reads the server's time an acquire sent at `sent` read (passing
// `expected`), answered at `received`: a step forward begins the watch
// anew; a row that lapsed unreleased and was left for the clock's sake
// (clock_watch.hpp) is told as held back, with why.
void postgres_store::impl::clock_seen(postgres_detail::parsed_acquire& parsed, time_point sent,
                                      std::int64_t expected, time_point received) {
  if (!parsed.server_time_us) return;
  const std::int64_t now_us = *parsed.server_time_us;
  if (const auto step = watch.observe(now_us, sent, received)) stepped = step;
  auto& a = parsed.answer;
  if (expected != 0 && now_us <= expected) stepped.reset();  // watched a ttl since the step
  // A hold-back ends on the server's clock, and the row may then need a
  // watch of a ttl too: the next try comes once both are over, so that a
  // first start is not held back twice.
  if (a.outcome == acquire_outcome::held_back) {
    // A failsafe hold or a register-only answer waits for no time the
    // store gives (the port's -1); the next grant meets the clock's rule.
    if (a.failsafe_hold || parsed.abstained) return;
    a.remaining = std::max(a.remaining, watch.wait_left(received));
    return;
  }
  if (!parsed.left_for_the_clock || a.outcome != acquire_outcome::held) return;
  a.outcome = acquire_outcome::held_back;
  a.free_in = std::chrono::microseconds(-1);
  a.remaining = watch.wait_left(received);
  if (stepped) {
    a.why = "the database clock stepped forward by about " + std::to_string(stepped->count()) +
            " ms, which can end a lease early: a lease that lapsed unreleased is taken only "
            "after watching the clock for one ttl";
  } else if (expected == 0) {
    a.why = "this node has watched the database clock for less than a ttl, and the lease "
            "lapsed unreleased: a step of that clock could have ended it early";
  } else {
    // The statement read the clock later than the last round trip allowed
    // for, with no step: at once again, with this round trip counted.
    a.remaining = milliseconds(1);
    a.why = "the database read its clock later than this node could vouch for";
  }
}

void postgres_store::impl::report_reset(std::string why, bool record_missing) {
  shell.report_reset(store_events::reset{std::move(why), record_missing, {}});
}

}  // namespace baton
