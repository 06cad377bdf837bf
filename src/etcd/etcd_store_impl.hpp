// What the parts of the etcd store share: the store's state
// (etcd_store::impl), the one request every call's answers pass through, and
// the declarations of its steps. The steps are defined by job, one file
// each, so that a job (the watch, say) reads and changes without the others
// around it:
//   etcd_store.cpp             the connection settings, the store made, what
//                              answers say about the data (the token floor),
//                              close() and status() with its rows
//   etcd_store_acquire.cpp     acquire, and the record created
//   etcd_store_term.cpp        the term held: renew, release, hand-over
//   etcd_store_candidates.cpp  this store's registration, the candidates'
//                              list, the cool-down
//   etcd_store_watch.cpp       the watch, its pings, and what it tells
//   etcd_store_tail.cpp        a standby's follow of another holder's lease
//                              to its end, and its revoke once etcd's
//                              answers prove it expired
//   etcd_store_failsafe.cpp    lease.failsafe peers: the record a grant,
//                              renewal and resume write, the failsafe hold,
//                              the resume (failsafe_record.hpp)
// Private to those files. etcd_store.hpp says what the store does; the
// comment on each step, where it is defined, says how.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "candidate_registry.hpp"
#include "election_keys.hpp"
#include "etcd_store.hpp"
#include "etcd_wire.hpp"
#include "expiry_proof.hpp"
#include "failsafe_record.hpp"
#include "http_client.hpp"
#include "store/store_shell.hpp"
#include "watch_stream.hpp"

namespace baton {
// The shorthand every part uses, as the one file had it: names only, no
// types or functions of its own.
namespace {

namespace asio = boost::asio;
using nlohmann::json;
using namespace etcd_detail;
using store_detail::store_shell;

}  // namespace


struct etcd_store::impl {
  // A term: its lease and the lease key's revision.
  struct held_term {
    std::int64_t lease = 0;
    std::int64_t revision = 0;
    std::int64_t raft_term = 0;  // stamped in its value (0 = none)
    // Its token: offset + the grant's revision, or the token a resume took
    // up again (whose lease key has a later revision).
    std::uint64_t token = 0;
  };

  // --- the store made (etcd_store.cpp) ---------------------------------------

  impl(asio::io_context& context, etcd_store_options opts);
  ~impl();

  std::string where() const { return client->current().redacted(); }

  // --- one request and its guard ---------------------------------------------

  // POSTs `body` to `path`; `next` reads the answer. A failure, a closed
  // store or an answer `next` cannot read (it throws) goes to `handler`.
  template <typename Answer>
  void request(std::shared_ptr<std::function<void(store_error, Answer)>> handler, std::string path,
               std::string body, std::function<void(const json&)> next) {
    client->post(
        std::move(path), std::move(body),
        [this, weak = shell.guard(), handler, next = std::move(next)](store_error e, json j) {
          if (weak.expired()) return;
          if (shell.closed()) return (*handler)(store_shell::aborted(), Answer{});
          if (e) return (*handler)(shell.note_failure(std::move(e)), Answer{});
          try {
            next(j);
          } catch (const std::exception& ex) {
            (*handler)(shell.note_failure(
                           {etcd_errc::unexpected_reply, "etcd " + where() + ": " + ex.what()}),
                       Answer{});
          }
        });
  }

  // An answer known without asking etcd, posted (never inline).
  template <typename Answer>
  void answer_later(std::function<void(store_error, Answer)> handler, Answer a) {
    asio::post(io, [this, weak = shell.guard(), handler = std::move(handler), a = std::move(a)] {
      if (weak.expired()) return;
      if (shell.closed()) return handler(store_shell::aborted(), Answer{});
      handler({}, a);
    });
  }

  void forget(std::string path, std::string body);

  // --- what answers say about the data (etcd_store.cpp) ----------------------

  void heard(const std::optional<token_floor::finding>& f);
  void seen(const header& h);
  void seen_txn(const header& h, std::int64_t known);
  void seen_on_stream(const header& h);
  void seen_record(const std::optional<key_value>& record) { heard(floor.observe_record(record)); }

  // --- acquire (etcd_store_acquire.cpp) --------------------------------------

  using acquire_ptr = std::shared_ptr<acquire_handler>;

  void acquire(acquire_ptr h, int attempt);
  acquire_ptr counting(acquire_ptr h, std::vector<candidate_info> live) const;
  void reserved(acquire_ptr h, const key_value& kv);
  void held(acquire_ptr h, const key_value& kv, int attempt, std::uint64_t token);
  void held_back(acquire_ptr h, const key_value& fence_kv);
  void grant(acquire_ptr h, std::function<void(std::int64_t lease, const header&)> next);
  void saw_holder(const std::optional<key_value>& kv);
  void saw_release_mark(const std::optional<key_value>& kv);
  void saw_reservation(const std::optional<key_value>& kv);
  void take(acquire_ptr h, const election_view& view, int attempt,
            const std::vector<registered_promise>& promises);
  void wait_out_holder(acquire_ptr h, const key_value& old, mono_clock::duration left,
                       std::int64_t raft_term_now);
  void take_free(acquire_ptr h, const election_view& view, int attempt);
  void retry(acquire_ptr h, int attempt);
  void fence(acquire_ptr h, const election_view& view, int attempt);

  // --- lease.failsafe peers (etcd_store_failsafe.cpp) ------------------------

  bool failsafe_on() const { return !options.identity.peer_address.empty(); }
  // What this store's registration says of the mode at `at`: its peer port
  // and the promise it keeps then; nullopt without the mode.
  std::optional<registration_failsafe> failsafe_fields(time_point at) const;
  // Whether a call sent at `at` must put the registration for the mode's
  // sake: it keeps a promise, or the last put carried one that ended.
  bool failsafe_put_due(time_point at) const;
  // The token of the term the lease key `lease` names: the record's when
  // the record names that term (a resumed term's lease key is newer than
  // its token), else offset + its revision.
  std::uint64_t token_of_lease(const key_value& lease,
                               const std::optional<key_value>& record) const;
  // The record's hold, or a caller that may not win: answered, true; false
  // when the acquire goes on (take()).
  bool hold_or_abstain(acquire_ptr h, const election_view& view,
                       const std::vector<registered_promise>& promises);
  // What a grant's txn adds with the mode: the record of the new term.
  std::optional<txn_op> grant_record() const;
  // The lease key is the record's term (a resumed one): a fence keeps it.
  bool record_holds_lease(const election_view& view) const;
  void clear_record(std::shared_ptr<release_handler> h, held_term t);
  void resume(std::shared_ptr<renew_handler> h, std::uint64_t token, failsafe_list list,
              int attempt);
  void resume_write(std::shared_ptr<renew_handler> h, std::uint64_t token, failsafe_list list,
                    int attempt, election_view view, std::int64_t lease);

  // --- the registration (etcd_store_candidates.cpp) --------------------------

  // A call's txn, of no condition, for a call sent at `sent`: this store's
  // registration put when one is due (registration_run), then `reads`, the
  // first of them operation `first_read` of the answer. Without the put the
  // txn is reads alone, which etcd serves as a linearizable read: no raft
  // proposal, no new revision.
  struct registering_call {
    std::string body;
    std::size_t first_read = 0;
    std::vector<txn_op> ops{};  // the body's operations
  };
  registering_call registering_txn(std::vector<txn_op> reads, time_point sent) const;
  void registered(const txn_answer& t, bool put, time_point sent,
                  const std::optional<key_value>& own);
  std::optional<key_value> own_registration(const std::vector<key_value>& kvs) const;
  void list_candidates(std::shared_ptr<candidates_handler> h);

  // --- the term: release, hand-over (etcd_store_term.cpp) --------------------

  // `list`: lease.failsafe peers' renewal, which writes it into the record.
  void renew(std::shared_ptr<renew_handler> h, held_term t, std::optional<failsafe_list> list);
  void renewed_if_ours(std::shared_ptr<renew_handler> h, held_term t,
                       const std::vector<key_value>& kvs);
  void revoke(std::shared_ptr<release_handler> h, held_term t);
  void mark_released(std::shared_ptr<release_handler> h, held_term t);
  void hand_over(std::shared_ptr<release_handler> h, held_term t, std::string to,
                 milliseconds window);
  void reserve(std::shared_ptr<release_handler> h, held_term t, const reservation& r,
               std::int64_t window);
  void end_handed_term(std::shared_ptr<release_handler> h, held_term t, bool handed);

  // --- the follow of another holder's lease (etcd_store_tail.cpp) ------------

  void follow_tail(const key_value& kv, const ttl_reading& r);
  void ask_tail(std::int64_t lease);
  void end_tail(const key_value& kv);
  static ttl_reading reading_of(const ttl_answer& t, time_point sent);

  // --- the watch (etcd_store_watch.cpp) --------------------------------------

  void arm_watch();
  void open_stream(std::int64_t from);
  void on_watch_line(std::string_view line);
  void schedule_ping(std::uint64_t generation);
  void ping(std::uint64_t generation);
  void watch_where_the_calls_are();
  void stream_failed(store_error e);
  void watch_failed(store_error e);

  asio::io_context& io;
  etcd_store_options options;
  store_shell shell;
  const election_keys keys;
  const std::string own_value;
  const std::int64_t seconds;  // the etcd lease TTL: the ttl rounded up
  std::shared_ptr<http_client> client;
  token_floor floor;
  std::optional<token_floor::finding> pending_fence;
  // The revisions answers carried and when, and this store's registrations
  // without a gap (candidate_registry.hpp).
  revision_clock clock;
  registration_run run;
  // The last lease the released key named, or this store revoked in the raft
  // term its term began in (etcd_store_tail.cpp): its end was no early
  // revoke (0 = none).
  std::int64_t released_lease = 0;
  // The term this store holds.
  std::optional<held_term> term;
  // The lease key as another store last held it (read or watched), kept
  // after its delete: see take().
  std::optional<key_value> last_holder;
  // A last holder's lease found gone when it may have been revoked early,
  // and until when this store holds back for it.
  struct ended_lease {
    std::int64_t lease = 0;
    time_point until;
  };
  std::optional<ended_lease> early_end;
  // Another holder's lease this standby follows to its end, and whether
  // etcd refused a revoke (the role): from then on it waits for etcd.
  struct followed_lease {
    key_value kv;
    expiry_proof proof;
  };
  std::optional<followed_lease> tail;
  asio::steady_timer tail_timer;
  bool tail_refused = false;
  // The watch.
  bool watching = false;
  bool subscribed_before = false;
  wakeup_state watch_state = wakeup_state::off;
  std::shared_ptr<watch_stream> stream;
  asio::steady_timer retry_timer;
  asio::steady_timer ping_timer;
  milliseconds backoff{100};
  // Which watch an answer belongs to: a ping or a read for a watch that has
  // since failed finds a larger number here and is dropped.
  std::uint64_t watch_generation = 0;
  // The newest revision of the election's keys the watch reported, and one
  // a ping saw that the watch had not reported yet (0 = none).
  std::int64_t watched_revision = 0;
  std::int64_t suspect_revision = 0;
  // The endpoint the watch stream went to, and the last failure seen at
  // each endpoint (calls and the watch) until it answers again.
  std::size_t watch_at = 0;
  std::vector<std::string> endpoint_errors;
  // lease.failsafe peers. The failsafe acquire in progress (nullopt: a
  // plain one): the driver makes one acquire at a time.
  std::optional<failsafe_acquire> asking;
  // The promise this store's registration carries, from when the call that
  // gave it was sent; and whether the last put carried one.
  std::optional<failsafe_promise> promise;
  time_point promise_at{};
  bool promise_registered = false;
  // The highest token a failsafe acquire said it cleared, and the record as
  // the last read of the election's keys found it: a standby revokes no
  // lease of a term the record holds above it (etcd_store_tail.cpp).
  std::uint64_t cleared_token = 0;
  std::optional<failsafe_record> last_record;
  // A renewal found no record (a term granted by a plain acquire, or an
  // operator's delete): the next one writes it only while it is missing.
  bool record_missing_at_renew = false;
  // The failsafe calls behind lease_store::failsafe(), made on first use.
  std::unique_ptr<failsafe_calls> failsafe_calls_of;
};

}  // namespace baton
