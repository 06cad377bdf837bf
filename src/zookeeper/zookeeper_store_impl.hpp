// What the parts of the ZooKeeper store share: the store's state
// (zookeeper_store::impl) and the declarations of its steps. The steps are
// defined by job, one file each, so that a job (the watch, say) reads and
// changes without the others around it:
//   zookeeper_store.cpp             the store made, the frame of every call,
//                                   close() and status() with its rows
//   zookeeper_store_session.cpp     the session: the C client's link driven
//                                   by asio, names resolved, a session lost
//   zookeeper_store_acquire.cpp     acquire, and the election's nodes created
//   zookeeper_store_term.cpp        the term held: renew, release, hand-over,
//                                   its expiry
//   zookeeper_store_candidates.cpp  the candidates' registry: this store's
//                                   node, the list, the cool-down
//   zookeeper_store_watch.cpp       the lease node's watch and what it tells
//   zookeeper_store_failsafe.cpp    lease.failsafe peers: the registry's
//                                   promises before a take, the resume
// Private to those files. zookeeper_store.hpp says what the store does; the
// comment on each step, where it is defined, says how.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "failsafe_nodes.hpp"
#include "lease_nodes.hpp"
#include "server_list.hpp"
#include "store/store_shell.hpp"
#include "zk_link.hpp"
#include "zookeeper_store.hpp"

namespace baton {
// The shorthand every part uses, as the one file had it: names only, no
// types or functions of its own.
namespace {

namespace asio = boost::asio;
using namespace zookeeper_detail;
using store_detail::store_shell;

}  // namespace

// Named, not anonymous: zookeeper_store::impl holds them, and a type with
// linkage may not hold one without (GCC says so).
namespace zookeeper_detail {

// One public call: its handler runs once, whoever finishes it first.
struct op_base {
  virtual ~op_base() = default;
  virtual void abort() = 0;
  bool done = false;
};

template <typename Answer>
struct op final : op_base {
  op(boost::asio::io_context& io, std::function<void(store_error, Answer)> h)
      : handler(std::move(h)), deadline(io) {}
  void finish(store_error e, Answer a) {
    if (done) return;
    done = true;
    deadline.cancel();
    auto h = std::move(handler);
    h(std::move(e), std::move(a));
  }
  void abort() override { finish(store_detail::store_shell::aborted(), Answer{}); }

  std::function<void(store_error, Answer)> handler;
  boost::asio::steady_timer deadline;
};

// A call's failure: the code for `rc`, with the client's words for it after
// `what`.
inline store_error zoo_failure(int rc, const std::string& what) {
  return {classify_zoo_result(rc), what + ": " + zoo_result_text(rc)};
}

}  // namespace zookeeper_detail

using zookeeper_detail::op;
using zookeeper_detail::op_base;

struct zookeeper_store::impl {
  // --- the store made, the frame of every call (zookeeper_store.cpp) ---------

  impl(asio::io_context& context, zookeeper_store_options opts, std::vector<server_address> list,
       std::string credentials);
  ~impl();

  milliseconds ttl() const { return options.identity.ttl; }
  milliseconds session_timeout() const {
    return options.session_timeout.count() > 0 ? options.session_timeout : ttl();
  }
  std::string where() const { return options.servers + " " + paths.election; }

  store_error note_failure(store_error e);
  void later(std::function<void()> fn);

  template <typename Answer>
  std::shared_ptr<op<Answer>> start(std::function<void(store_error, Answer)> handler,
                                    const char* what, milliseconds bound = milliseconds(0)) {
    auto o = std::make_shared<op<Answer>>(io, std::move(handler));
    std::erase_if(ops, [](const std::weak_ptr<op_base>& w) {
      const auto p = w.lock();
      return !p || p->done;
    });
    ops.push_back(o);
    const auto limit =
        bound.count() > 0 ? bound : options.connect_timeout + options.command_timeout;
    o->deadline.expires_after(limit);
    o->deadline.async_wait([this, w = shell.guard(), weak_op = std::weak_ptr<op<Answer>>(o), what,
                            limit](const boost::system::error_code& ec) {
      if (ec || w.expired()) return;
      if (auto p = weak_op.lock()) {
        p->finish(note_failure({zookeeper_errc::timeout,
                                std::string(what) + " on ZooKeeper " + where() +
                                    ": no answer within " + std::to_string(limit.count()) + " ms"}),
                  Answer{});
      }
    });
    return o;
  }

  // Every call's prologue: refused once closed; otherwise `body(o)` runs on
  // the loop later (a call never completes inline), unless the call is
  // answered or the store closed by then.
  // `bound`: how long the call may take in all (0 = connect_timeout +
  // command_timeout).
  template <typename Answer, typename Body>
  void begin_call(std::function<void(store_error, Answer)>& handler, const char* what, Body body,
                  milliseconds bound = milliseconds(0)) {
    if (shell.reject_if_closed(handler)) return;
    auto o = start<Answer>(std::move(handler), what, bound);
    later([this, o, body = std::move(body)]() mutable {
      if (o->done) return;
      if (shell.closed()) return o->abort();
      body(o);
    });
  }

  // The same, for a call that needs the session: `body(o)` once it is up;
  // answered with why not when it does not come up in time.
  template <typename Answer, typename Body>
  void begin_session_call(std::function<void(store_error, Answer)>& handler, const char* what,
                          Body body) {
    begin_call(handler, what,
               [this, body = std::move(body)](std::shared_ptr<op<Answer>> o) mutable {
                 with_session([o, body = std::move(body)](store_error e) mutable {
                   if (o->done) return;
                   if (e) return o->finish(e, {});
                   body(o);
                 });
               });
  }

  // --- the session (zookeeper_store_session.cpp) -----------------------------

  void ensure_link();
  void resolve();
  void on_move(const std::string& server, milliseconds silent);
  store_error call_failure(int rc, const std::string& what) const;
  void on_state(int state);
  void session_lost(const std::string& why, const std::string& what = {});
  void drop_link();
  void with_session(std::function<void(store_error)> fn, milliseconds wait = milliseconds(0));
  void run_waiters(const store_error& e);
  void fail_waiters(const store_error& e) { run_waiters(e); }

  // --- the term this store holds (zookeeper_store_term.cpp) ------------------

  void hold_term(std::uint64_t token, std::int32_t lease_version, std::int32_t record_version,
                 time_point sent_at, record_value record);
  void arm_expiry();
  void drop_term(bool delete_node);
  std::vector<zk_op> end_term_ops(const record_value& record) const;
  void end_term(const std::shared_ptr<op<release_answer>>& o, const record_value& record,
                const char* what);
  std::string own_lease_data() const;

  // --- acquire (zookeeper_store_acquire.cpp) ---------------------------------

  // An acquire's lease.failsafe peers arguments; nullptr = a plain acquire.
  using grant_args = std::shared_ptr<const failsafe_grant>;

  void acquire(std::shared_ptr<op<acquire_answer>> o, int attempt, grant_args fs = nullptr);
  void read_then_decide(const std::shared_ptr<op<acquire_answer>>& o, int attempt,
                        const grant_args& fs);
  bool may_take_unread(int attempt, const grant_args& fs) const;
  bool note_seen(const node_seen& record, const node_seen& lease, time_point now);
  void note_lease(const node_seen& lease, time_point now);
  void decide(const std::shared_ptr<op<acquire_answer>>& o, int attempt, const node_seen& record,
              const node_seen& lease, const grant_args& fs);
  void retry_or_give_up(const std::shared_ptr<op<acquire_answer>>& o, int attempt,
                        const grant_args& fs);
  void take(const std::shared_ptr<op<acquire_answer>>& o, int attempt, std::vector<zk_op> ops_,
            const record_value& record, std::uint64_t token, const grant_args& fs);
  void create_record_held(const std::shared_ptr<op<acquire_answer>>& o, int attempt,
                          const record_value& record, time_point now, const grant_args& fs);
  void write_hold(const std::shared_ptr<op<acquire_answer>>& o, int attempt,
                  const acquire_steps::write_hold& s, time_point now, const grant_args& fs);
  void ensure_parents(std::function<void(store_error)> done, bool candidates = false);
  void create_chain(std::shared_ptr<std::vector<std::string>> chain, std::size_t i,
                    std::function<void(store_error)> done);

  // --- lease.failsafe peers (zookeeper_store_failsafe.cpp) -------------------

  bool failsafe_on() const { return !options.identity.peer_address.empty(); }
  void take_unless_promised(const std::shared_ptr<op<acquire_answer>>& o, int attempt,
                            const acquire_steps::take& s, const grant_args& fs);
  void keep_promise(const std::optional<failsafe_promise>& promise);
  void renew(const std::shared_ptr<op<renew_answer>>& o, const failsafe_list* list);
  void resume(const std::shared_ptr<op<renew_answer>>& o, std::uint64_t token,
              const failsafe_list& list, int attempt);
  void write_resume(const std::shared_ptr<op<renew_answer>>& o, std::uint64_t token,
                    const failsafe_list& list, int attempt, const resume_steps::write& w);

  // --- the registry and its cache (zookeeper_store_candidates.cpp) -----------

  candidate_value own_candidate() const;
  void register_candidate();
  void create_registration(std::uint64_t gen, int attempt);
  void replace_registration(std::uint64_t gen, int attempt, const std::string& path);
  void registration_failed(store_error e);
  void mark_cooling(milliseconds cooldown);
  void clear_cooling();
  void write_registration(std::string data);
  void list_candidates(const std::shared_ptr<op<std::vector<candidate_info>>>& o);
  void refresh_registry();
  void remove_predecessor(const std::string& path);
  int outranked_by(const std::string& holder) const;

  // --- the watch (zookeeper_store_watch.cpp) ---------------------------------

  void arm_watch();
  void node_event(int type, const std::string& path);
  bool announce_deletion();
  bool observe(const node_seen& seen);
  wakeup_state current_wakeups() const;

  struct waiter {
    std::uint64_t id;
    std::function<void(store_error)> fn;
    std::shared_ptr<asio::steady_timer> timer;
  };
  struct term {
    std::uint64_t token = 0;
    std::int32_t lease_version = -1;
    std::int32_t record_version = -1;
    std::uint64_t gen = 0;
    time_point valid_until{};
    // The record as the term's last write left it (its version is
    // record_version): a renewal of lease.failsafe peers rewrites its list.
    record_value record{};
  };

  asio::io_context& io;
  zookeeper_store_options options;
  store_shell shell;
  const lease_paths paths;
  // New per store: the lease node names the store that holds it, so a
  // restarted daemon with the same node id never renews its predecessor's
  // term.
  const std::string nonce;
  std::vector<server_address> servers;
  std::string digest;
  std::string numeric_hosts;
  // The addresses the client was given, each with its server.
  std::vector<server_address_of> addresses;
  // The server of `servers` the session is on (none while connecting), and
  // the last failure seen at each, until a session is up on it again.
  std::optional<std::size_t> server_in_use;
  std::vector<std::string> server_errors;
  bool resolving = false;
  std::unique_ptr<asio::ip::tcp::resolver> resolver;

  std::shared_ptr<zk_link> link;
  std::uint64_t link_gen = 0;
  bool session_up = false;
  milliseconds negotiated{0};
  store_error session_problem;
  // Why the link left the server it was on ("" = it did not, or the
  // session is up again).
  std::string move_reason;
  std::string last_state = "not connected";
  int last_state_code = 0;
  asio::steady_timer lost_timer;
  bool lost_timer_running = false;
  std::string pending_reset;
  time_point pending_reset_at{};
  std::list<waiter> waiters;
  std::uint64_t waiter_id = 0;
  std::vector<std::weak_ptr<op_base>> ops;

  term held;
  bool renewing = false;
  // Writes of this store that delete its own lease node, sent and not
  // answered: a deletion heard meanwhile may be this store's own.
  int own_deletes = 0;
  // The release or hand-over waiting for the renewal in flight (end_term).
  std::vector<std::function<void()>> after_renewal;
  asio::steady_timer expiry_timer;

  std::string seen_hold;
  time_point seen_hold_at{};
  std::int64_t seen_lease_czxid = 0;
  std::int32_t seen_lease_version = -1;
  time_point seen_lease_at{};
  std::uint64_t seen_lease_token = 0;
  std::int64_t seen_record_czxid = 0;
  std::int32_t seen_record_version = -1;
  time_point seen_record_at{};
  int hold_count = 0;

  // The server's clock, from this store's own writes (its registration, its
  // terms' writes): a reservation's end and a registration's age.
  server_clock server_time;
  // The session (link_gen) this store is registered on, and the one whose
  // registration is under way (0 = none).
  std::uint64_t registered_gen = 0;
  std::uint64_t registering_gen = 0;
  /// The registry node's data announces a cool-down (mark_cooling) that the
  /// next acquire takes back.
  bool cooling_marked = false;
  // lease.failsafe peers: the promise this node keeps (F9) as its last
  // acquire said it, and when it ends on this process's clock; the
  // registry node's data as last written on this session.
  std::optional<failsafe_promise> promise;
  time_point promise_until{};
  bool promise_unwritten = false;
  // The port's failsafe calls, made on first use (zookeeper_store::failsafe).
  struct failsafe_side;
  std::shared_ptr<failsafe_calls> failsafe_calls_of;
  // The registry's names as last read (this store's own node id aside), the
  // session they were read on (0 = none), whether the watch fired or the
  // connection broke since, and the session of a read under way (0 = none).
  std::vector<candidate_value> registry;
  std::uint64_t registry_gen = 0;
  bool registry_stale = true;
  std::uint64_t registry_reading_gen = 0;

  bool watching = false;
  bool watch_armed = false;
  bool ever_armed = false;
  bool arming = false;
  bool rearm = false;
  bool baseline = false;
  bool suppress_release = false;
  bool deleted_event = false;
  bool created_event = false;
  std::int64_t watched_czxid = 0;
  // The lease node's deletion was heard and announced at once
  // (announce_deletion), and no event of the lease node came since: the
  // next acquire may take without reading the lease node first.
  bool lease_gone = false;
  // The record as the last acquire read it, with a data watch: current
  // while the watch has not fired (record_stale) on that session
  // (cached_record_gen), so a take after a crash needs no read.
  node_seen cached_record;
  std::uint64_t cached_record_gen = 0;
  bool record_stale = true;
};

}  // namespace baton
