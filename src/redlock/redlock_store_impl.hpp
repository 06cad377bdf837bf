// What the parts of the Redlock store share: the store's state
// (redlock_store::impl), each round's state object, and the declarations of
// its steps. The steps are defined by job, one file each, so that a job (the
// renewal, say) reads and changes without the others around it:
//   redlock_store.cpp             the store made, a script run on one
//                                 master, the per-master bookkeeping and a
//                                 round's error; the port's calls, close()
//                                 and status() with a row per master
//   redlock_store_acquire.cpp     acquire: the grants, the token written
//                                 back, a refusal, the grants given back
//   redlock_store_term.cpp        the term held: renew (and the free
//                                 masters taken), release, hand-over
//   redlock_store_candidates.cpp  the candidates' list, the cool-down, a
//                                 look at the holder, the record created
//   redlock_store_watch.cpp       the announcements' watch on every master
//                                 and whether its wake-ups can be trusted
//   redlock_store_failsafe.cpp    lease.failsafe peers: the port's failsafe
//                                 calls, their arguments, and the resume
// Private to those files. redlock_store.hpp says what the store does; the
// comment on each step, where it is defined, says how.
#pragma once

#include <boost/asio/io_context.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "announcements.hpp"
#include "member_state.hpp"
#include "quorum.hpp"
#include "redis/connection.hpp"
#include "redis/lease_keys.hpp"
#include "redis/redis_node.hpp"
#include "redis/scripts.hpp"
#include "redis/subscriber.hpp"
#include "redlock_store.hpp"
#include "store/failsafe_forwarder.hpp"
#include "store/store_shell.hpp"

namespace baton {
// The shorthand every part uses, as the one file had it: names only, no
// types or functions of its own.
namespace {

namespace asio = boost::asio;
using redis_detail::command_result;
using redis_detail::connection;
using redis_detail::redis_node;
using redis_detail::subscriber;
using redlock_detail::acquire_round;
using redlock_detail::master_answer;
using redlock_detail::quorum_tally;
using redlock_detail::verdict;
using store_detail::store_shell;

}  // namespace

// Named, not anonymous: redlock_store::impl (declared in the header) holds
// them, and a type with linkage may not hold one without (unity batches
// compile this file as if it were a header, and GCC says so).
namespace redlock_detail {

// What went wrong on which master during one round.
struct round_failures {
  std::vector<std::pair<std::size_t, store_error>> list;

  void add(std::size_t master, store_error e) { list.emplace_back(master, std::move(e)); }
};

struct member {
  std::string endpoint;  // redacted
  std::shared_ptr<redis_detail::redis_node> node;
  std::shared_ptr<redis_detail::subscriber> watch;
  member_state state;
};

}  // namespace redlock_detail

using redlock_detail::member;
using redlock_detail::round_failures;

struct redlock_store::impl {
  struct acquire_call {
    acquire_handler handler;
    time_point sent;
    acquire_round round;
    quorum_tally writes;
    std::uint64_t token = 0;
    enum class stage { asking, writing, done } at = stage::asking;
    // A majority granted and the round has not been lost since.
    bool winning = false;
    round_failures failures;
    // lease.failsafe peers: what the write-back adds to write the record
    // (record_args); empty without the mode.
    std::vector<std::string> record;

    acquire_call(acquire_handler h, std::size_t n) : handler(std::move(h)), round(n), writes(n) {}
  };

  struct renew_call {
    renew_handler handler;
    time_point sent;
    quorum_tally tally;
    bool done = false;
    // Renewed by a majority within validity.
    bool won = false;
    // Masters that answered that the lease is not ours there.
    std::vector<std::size_t> not_ours;
    round_failures failures;
    // lease.failsafe peers: what a take adds to write the record
    // (record_args); empty without the mode.
    std::vector<std::string> record;
    // "renew" or "resume", for the round's error.
    const char* what = "renew";

    renew_call(renew_handler h, std::size_t n) : handler(std::move(h)), tally(n) {}
  };

  struct release_call {
    release_handler handler;
    quorum_tally answered;
    std::size_t released = 0;
    bool done = false;
    round_failures failures;

    release_call(release_handler h, std::size_t n) : handler(std::move(h)), answered(n) {}
  };

  struct candidates_call {
    candidates_handler handler;
    std::size_t left = 0;
    std::vector<std::vector<registered_candidate>> answered;
    round_failures failures;
  };

  struct record_call {
    record_handler handler;
    std::size_t left = 0;
    std::size_t created = 0;
    round_failures failures;
  };

  // A look's answers (redlock_store_candidates.cpp says how they combine).
  struct look_call {
    look_handler handler;
    std::size_t left = 0;
    std::vector<lease_holder> answers;
    round_failures failures;
  };

  // --- the store made, a script on one master (redlock_store.cpp) ----------

  impl(asio::io_context& context, redlock_store_options opts);
  ~impl();

  std::size_t size() const { return members.size(); }

  void eval(std::size_t i, const redis_detail::lua_script& script,
            std::vector<std::string> script_keys, std::vector<std::string> args,
            std::function<void(command_result)> done);

  // --- per-master bookkeeping (redlock_store.cpp) ----------------------------

  void member_failed(std::size_t i, const store_error& e);
  void member_reset(std::size_t i, const std::string& why, bool record_missing);
  void failed_in(round_failures& f, std::size_t i, store_error e);
  store_error round_error(const round_failures& f, bool answered, const std::string& summary);
  std::string of_masters(std::size_t k) const;

  // --- acquire (redlock_store_acquire.cpp) -----------------------------------

  void release_everywhere(const redlock_detail::acquire_round* round = nullptr);
  // `mode`: lease.failsafe peers' acquire; nullptr = without the mode.
  void acquire(acquire_handler handler, const failsafe_acquire* mode = nullptr);
  void on_grant(const std::shared_ptr<acquire_call>& shared, std::size_t i, command_result r);
  void write_back(const std::shared_ptr<acquire_call>& shared);
  std::pair<std::vector<std::string>, std::vector<std::string>> write_back_of(
      const acquire_call& call, const std::string& announce) const;
  void on_written(acquire_call& call, std::size_t i, command_result r);
  void refuse(acquire_call& call);
  void finish(acquire_call& call, store_error e, acquire_answer a);

  // --- the term: renew, release, hand-over (redlock_store_term.cpp) ----------

  // `list`: lease.failsafe peers' renewal; nullptr = without the mode.
  void renew(renew_handler handler, const failsafe_list* list = nullptr);
  void on_renewed(renew_call& call, std::size_t i, command_result r);
  void take(std::size_t i, const std::vector<std::string>& record);
  void finish(renew_call& call, store_error e, renew_answer a);
  void release(release_handler handler, std::vector<std::string> reservation = {});
  void on_released(release_call& call, std::size_t i, command_result r);
  void finish(release_call& call, store_error e, release_answer a);

  // --- candidates, cool-down, look, record (redlock_store_candidates.cpp) ----

  void candidates(candidates_handler handler);
  void on_candidates(candidates_call& call, std::size_t i, command_result r);
  void register_cooldown(milliseconds cooldown);
  void look(look_handler handler);
  void create_record(record_handler handler);

  // --- lease.failsafe peers (redlock_store_failsafe.cpp) ---------------------

  // What a script that writes the record adds to its arguments: "failsafe",
  // the list number, our peer address and the list.
  std::vector<std::string> record_args(const failsafe_list& list) const;
  std::vector<std::string> acquire_args(const failsafe_acquire* mode) const;
  // The port's calls (failsafe_forwarder hands them over once the store is
  // known to be open).
  void acquire_with_record(const failsafe_acquire& a, acquire_handler handler);
  void renew_with_record(const failsafe_list& list, renew_handler handler);
  void resume_with_record(std::uint64_t token, const failsafe_list& list, renew_handler handler);

  // --- events (redlock_store_watch.cpp) --------------------------------------

  void start_watch();
  std::size_t subscribed() const;
  void note_wakeups();
  wakeup_state current_wakeups() const;

  asio::io_context& io;
  redlock_store_options options;
  // Closed, the listener, wake-ups said, the last error and reset; and the
  // guard every completion holds.
  store_shell shell;
  const std::string value;
  // Its term key: per master, the largest token a term wrote there.
  const election_keys keys;
  const std::string ttl_ms;
  // What the scripts register with our node id: the priority and the card
  // (update_card changes it).
  std::string priority =
      redis_detail::registration_argument(options.identity.priority, options.identity.card);
  std::vector<redis_detail::connection_options> conn_options;
  std::vector<member> members;
  bool watching = false;
  // Retry delay after a split vote: 0.2 to 5 ms, so that the two sides try
  // at different moments.
  std::minstd_rand random{std::random_device{}()};
  std::uniform_int_distribution<long> split_jitter{200, 5000};
  // The token of the lease we last won (0 = none): renewals may take free
  // masters only for it.
  std::uint64_t held_token = 0;
  redlock_detail::announcement_merge announcements{options.masters.size()};
  store_detail::failsafe_forwarder<impl> failsafe_calls_of{*this};
};

}  // namespace baton
