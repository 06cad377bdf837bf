// What the parts of the Redis store share: the store's state
// (redis_store::impl), the common tail of every operation, and the
// declarations of its steps. The steps are defined by job, one file each,
// so that a job (the watch, say) reads and changes without the others
// around it:
//   redis_store.cpp             the store made, a master's switch, a script
//                               run, the resets told; the port's frame,
//                               close() and status()
//   redis_store_arguments.cpp   the keys and arguments each script takes
//                               for this store's kind
//   redis_store_replicas.cpp    redis.replica_ack: WAIT and what its reply
//                               says, a new term announced once acknowledged
//   redis_store_acquire.cpp     acquire
//   redis_store_term.cpp        the term held: renew, release, hand-over
//   redis_store_failsafe.cpp    lease.failsafe peers: the port's failsafe
//                               calls and the record's arguments
//   redis_store_candidates.cpp  the candidates' list, the cool-down, the
//                               card, a look at the holder, the record
//   redis_store_watch.cpp       the announcements' watch and what it tells
// Private to those files. redis_store.hpp says what the store does; the
// comment on each step, where it is defined, says how.
#pragma once

#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "connection.hpp"
#include "lease_keys.hpp"
#include "redis_node.hpp"
#include "redis_reply.hpp"
#include "redis_store.hpp"
#include "scripts.hpp"
#include "store/failsafe_forwarder.hpp"
#include "store/store_shell.hpp"
#include "subscriber.hpp"

namespace baton {
// The shorthand every part uses, as the one file had it: names only, no
// types or functions of its own.
namespace {

namespace asio = boost::asio;
using redis_detail::command_result;
using redis_detail::connection;
using redis_detail::lua_script;
using redis_detail::redis_node;
using redis_detail::subscriber;
using store_detail::store_shell;

}  // namespace

struct redis_store::impl {
  // --- the store made (redis_store.cpp) --------------------------------------

  impl(asio::io_context& context, redis_store_options opts);
  ~impl();

  void on_switch(const std::string& why);

  // --- the scripts' keys and arguments (redis_store_arguments.cpp) -----------

  std::vector<std::string> acquire_keys() const;
  std::vector<std::string> acquire_args() const;
  std::vector<std::string> renew_args() const;
  std::vector<std::string> plain_renew_keys() const;
  std::vector<std::string> release_keys() const;
  std::vector<std::string> release_args(bool announced = true) const;
  std::string ack_requirement() const;
  std::vector<std::string> required_renew_keys() const;
  std::string publish_command() const { return options.sharded_pubsub ? "SPUBLISH" : "PUBLISH"; }

  // --- with lease.failsafe peers (redis_store_failsafe.cpp) ------------------

  std::vector<std::string> acquire_args(const failsafe_acquire& a) const;
  std::vector<std::string> with_failsafe_key(std::vector<std::string> script_keys) const;
  std::vector<std::string> renew_args(std::uint64_t token, const failsafe_list& list) const;
  std::vector<std::string> resume_args(std::uint64_t token, const failsafe_list& list) const;
  std::vector<std::string> resume_keys() const;

  // --- redis.replica_ack (redis_store_replicas.cpp) --------------------------

  void acknowledge(std::uint64_t sent_on, int needed, std::function<void(std::string)> then);
  void announce(std::uint64_t term);
  std::vector<std::string> wait_command(int needed) const;
  static std::string ack_shortfall(const std::optional<command_result>& wait, int needed,
                                   milliseconds timeout);

  // --- a script run, and its answer (redis_store.cpp) ------------------------

  void eval(const lua_script& script, std::vector<std::string> script_keys,
            std::vector<std::string> args, std::function<void(command_result)> done);

  // The common tail of every operation: closed -> aborted, transport error
  // or parse error -> its code and detail (also kept for status()), else the
  // value.
  template <typename T, typename Parse, typename Handler>
  void finish(const command_result& r, Parse parse, const Handler& handler) {
    if (shell.closed()) {
      handler(store_shell::aborted(), T{});
      return;
    }
    if (r.ec) {
      handler(shell.note_failure({r.ec, r.detail}), T{});
      return;
    }
    auto parsed = parse(r.reply);
    if (parsed.ec) {
      handler(shell.note_failure({parsed.ec, parsed.detail}), T{});
      return;
    }
    handler(store_error{}, std::move(parsed.value));
  }

  // --- resets (redis_store.cpp) ----------------------------------------------

  void report_reset(std::string why, bool record_missing = false);
  void report_script_reset(const acquire_script_reply& a);

  // --- the watch (redis_store_watch.cpp) -------------------------------------

  void follow_runner(const acquire_answer& a);
  void on_watch_failure();
  void on_release_or_resubscribe();
  void note_wakeups();
  wakeup_state current_wakeups() const;

  // --- acquire and renew (redis_store_acquire.cpp, redis_store_term.cpp) -----

  void acquire(std::vector<std::string> script_keys, std::vector<std::string> args,
               acquire_handler handler);
  void renew(const lua_script& script, std::vector<std::string> script_keys,
             std::vector<std::string> args, renew_handler handler);
  // The candidates a renewal read, to the watcher (store_events::listed).
  void tell_listed(const std::optional<redis_reply>& listed);

  // lease.failsafe peers: the port's failsafe calls on this store
  // (redis_store_failsafe.cpp).
  // lease.failsafe peers: the port's calls (failsafe_forwarder hands them
  // here once it checked the store is open).
  void acquire_with_record(const failsafe_acquire& a, acquire_handler handler);
  void renew_with_record(const failsafe_list& list, renew_handler handler);
  void resume_with_record(std::uint64_t token, const failsafe_list& list, renew_handler handler);

  asio::io_context& io;
  redis_store_options options;
  redis_detail::connection_options conn_options;
  // Closed, the listener, wake-ups said, the last error and reset; and the
  // guard every completion holds.
  store_shell shell;
  const std::string value;
  const election_keys keys;
  const std::string ttl_ms;
  // What the scripts register with our node id: the priority and the card
  // (update_card changes it).
  std::string priority;
  // How many standbys of a large election (options.large_election) try the
  // moment its lease is free (see the front key). Three: what an election
  // of three candidates has, whose takeover is at the machine's floor.
  static constexpr int front_runners = 3;
  // The user may not subscribe to the back runners' channel: stay on the
  // events channel (a back runner then hears releases, and waits its step).
  bool back_channel_refused = false;
  std::shared_ptr<redis_node> node;
  std::shared_ptr<subscriber> watch;
  // redis.replica_ack: the replicas WAIT counts for a renewal (sent with the
  // script, so before its answer): the number the last script answered.
  int ack_needed = 1;
  // The server (run_id) whose arrival the node's run_id check last told
  // watchers of; "" = none.
  std::string reset_told_for;
  // The token of this store's last grant: the term its renewals write into
  // the record of lease.failsafe peers.
  std::uint64_t term_token = 0;
  store_detail::failsafe_forwarder<impl> failsafe_calls_of{*this};
};

}  // namespace baton
