// A candidate's daemon in failsafe_model.hpp, as the daemon runs the rules
// (src/daemon/failsafe_side.cpp): its life (boot, crash, a term's end), the
// standby (acquire, a failsafe hold and its clearance) and the leader
// (renewals, a resume, rounds of confirmations while the store cannot be
// reached, a resign).
#include <algorithm>
#include <sstream>
#include <variant>

#include "failsafe_model.hpp"

namespace baton::testing {

using failsafe::clear_answer;
using failsafe::clearance;
using failsafe::confirm_answer;
using failsafe::confirm_request;
using failsafe::confirmation_rounds;
using failsafe::peer_promises;
using failsafe::term_id;

// --- a node's life -----------------------------------------------------------

void model::boot(std::size_t i) {
  auto& n = nodes_[i];
  n.alive = true;
  ++n.incarnation;
  n.peer = std::make_unique<peer_promises>(n.name, timing_, local(i));
  n.cleared_token = 0;
  n.clear.reset();
  n.call = 0;
  n.leading = false;
  trace([&] { return n.name + " starts (process " + std::to_string(n.incarnation) + ")"; });
  at_node(i, now_ + pick(0, 2'000), [this, i] { try_acquire(i); });
}

void model::crash(std::size_t i, us down_for) {
  auto& n = nodes_[i];
  if (!n.alive) return;
  stop_app(i, "its daemon died");
  n.alive = false;
  ++n.gen;
  n.leading = false;
  n.rounds.reset();
  n.list.reset();
  trace([&] { return n.name + " crashes"; });
  schedule(now_ + down_for, [this, i] { boot(i); });
}

void model::term_over(std::size_t i, const char* why) {
  auto& n = nodes_[i];
  if (!n.leading) return;
  n.leading = false;
  n.rounds.reset();
  n.list.reset();
  stop_app(i, why);
  at_node(i, now_ + pick(1'000, standby_retry_us), [this, i] { try_acquire(i); });
}

// --- the standby -------------------------------------------------------------

void model::try_acquire(std::size_t i) {
  auto& n = nodes_[i];
  if (n.leading || n.call != 0) return;
  const time_point now = local(i);
  if (n.clear) {
    const auto step = n.clear->next(*n.peer, now);
    if (const auto* t = std::get_if<clearance::take>(&step)) {
      n.cleared_token = std::max(n.cleared_token, t->cleared_token);
      ++figures_.cleared;
      trace([&] { return n.name + " cleared term " + std::to_string(t->cleared_token); });
      n.clear.reset();
    } else if (const auto* a = std::get_if<clearance::ask>(&step)) {
      ask_to_clear(i, a->whom);
      at_node(i, now_ + standby_retry_us, [this, i] { try_acquire(i); });
      return;
    } else {
      const auto& w = std::get<clearance::wait>(step);
      at_node(i, std::min(real_at(i, w.until), now_ + 5 * standby_retry_us),
              [this, i] { try_acquire(i); });
      // Still registered meanwhile (F9), without a chance to win.
      send_acquire(i, false);
      return;
    }
  }
  send_acquire(i, n.peer->may_take(now));
}

void model::send_acquire(std::size_t i, bool may_win) {
  auto& n = nodes_[i];
  if (n.call != 0) return;
  const time_point sent = local(i);
  const auto kept = n.peer->kept(sent);
  const us promise_left = kept ? micros(kept->until - sent) : 0;
  std::optional<term_id> promised;
  if (kept) promised = kept->term;
  const std::string name = n.name;
  const int incarnation = n.incarnation;
  const std::uint64_t cleared = n.cleared_token;
  call_store(
      i,
      [this, name, incarnation, cleared, may_win, promised, promise_left] {
        return store_.acquire(name, incarnation, cleared, may_win, promised, promise_left, now_);
      },
      [this, i, sent, may_win](const store_answer& a) { acquire_answered(i, sent, may_win, a); },
      [this, i] {
        at_node(i, now_ + pick(1'000, standby_retry_us), [this, i] { try_acquire(i); });
      });
}

void model::acquire_answered(std::size_t i, time_point sent, bool may_win, const store_answer& a) {
  auto& n = nodes_[i];
  const time_point now = local(i);
  switch (a.what) {
    case store_answer::granted: {
      ++figures_.grants;
      const time_point valid = sent + timing_.ttl - timing_.drift;
      n.peer->saw_term({n.name, a.token});
      if (now >= valid || !n.peer->may_take(now) || !may_win) {
        // Too late, or it promised meanwhile (F7): given back unused.
        give_back(i, a.token);
        return;
      }
      n.leading = true;
      n.term = {n.name, a.token};
      n.deadline = valid;
      n.store_valid = valid;
      n.list.emplace(n.name);
      n.seq = 1;
      n.list->sent(0, a.registry);
      n.list->acknowledged(0);
      n.registry_view = a.registry;
      n.rounds.reset();
      n.last_round.reset();
      trace([&] { return n.name + " granted token " + std::to_string(a.token); });
      start_app(i);
      arm_deadline(i);
      const term_id term = n.term;
      at_node(i, now_ + renew_interval_us, [this, i, term] { renew_tick(i, term); });
      if (chance(0.25)) {
        const std::uint64_t token = a.token;
        at_node(i, now_ + pick(ttl_us, 20 * ttl_us), [this, i, token] { resign(i, token); });
      }
      return;
    }
    case store_answer::hold:
      ++figures_.holds;
      if (!n.clear || n.clear->hold().term != a.failsafe.term) {
        n.clear.emplace(n.name, a.failsafe);
      }
      at_node(i, now_ + pick(0, 1'000), [this, i] { try_acquire(i); });
      return;
    case store_answer::held:
    case store_answer::held_back:
      at_node(i, now_ + std::min<us>(a.remaining + pick(0, 2'000), standby_retry_us),
              [this, i] { try_acquire(i); });
      return;
    default:
      at_node(i, now_ + pick(1'000, standby_retry_us), [this, i] { try_acquire(i); });
      return;
  }
}

void model::give_back(std::size_t i, std::uint64_t token) {
  auto& n = nodes_[i];
  const std::string name = n.name;
  const int incarnation = n.incarnation;
  call_store(
      i,
      [this, name, incarnation, token] { return store_.release(name, incarnation, token, now_); },
      [this, i](const store_answer&) {
        at_node(i, now_ + pick(1'000, standby_retry_us), [this, i] { try_acquire(i); });
      },
      [this, i] {
        at_node(i, now_ + pick(1'000, standby_retry_us), [this, i] { try_acquire(i); });
      });
}

void model::ask_to_clear(std::size_t i, const std::vector<std::string>& whom) {
  const term_id term = nodes_[i].clear->hold().term;
  for (const auto& peer : whom) {
    const std::size_t j = index_of(peer);
    const std::string asker = nodes_[i].name;
    send_peer(i, j, [this, i, j, term, asker] {
      auto& p = nodes_[j];
      const std::optional<time_point> own =
          p.leading && p.app_running ? std::optional<time_point>(p.deadline) : std::nullopt;
      const clear_answer answer = p.peer->on_clear(term, local(j), own);
      const std::string answerer = p.name;
      send_peer(j, i, [this, i, term, answerer, answer] {
        auto& n = nodes_[i];
        if (!n.clear || n.clear->hold().term != term) return;
        if (answer.cleared) {
          n.clear->cleared_by(answerer);
          try_acquire(i);
        } else {
          n.clear->held_by(answerer, answer.remaining, local(i));
        }
      });
    });
  }
}

// --- the leader --------------------------------------------------------------

void model::arm_deadline(std::size_t i) {
  auto& n = nodes_[i];
  const term_id term = n.term;
  at_node(i, real_at(i, n.deadline), [this, i, term] {
    auto& node = nodes_[i];
    if (!node.leading || node.term != term) return;
    if (local(i) >= node.deadline) {
      term_over(i, "its deadline passed");
    } else if (real_at(i, node.deadline) <= now_ + 1) {
      arm_deadline(i);  // a rounding short of it: look again
    }
  });
}

void model::moved_deadline(std::size_t i, time_point until) {
  auto& n = nodes_[i];
  if (until <= n.deadline) return;
  n.deadline = until;
  extend_keeper(i);
  arm_deadline(i);
}

void model::renew_tick(std::size_t i, const term_id& term) {
  auto& n = nodes_[i];
  if (!n.leading || n.term != term) return;
  if (local(i) >= n.deadline) return term_over(i, "its deadline passed");
  if (n.call == 0) send_renewal(i, false);
  at_node(i, now_ + (n.rounds ? renew_retry_us : renew_interval_us),
          [this, i, term] { renew_tick(i, term); });
}

void model::send_renewal(std::size_t i, bool resume) {
  auto& n = nodes_[i];
  const time_point sent = local(i);
  const std::uint64_t seq = n.seq++;
  n.list->sent(seq, n.registry_view);
  const std::string name = n.name;
  const int incarnation = n.incarnation;
  const term_id term = n.term;
  const std::vector<std::string> view = n.registry_view;
  call_store(
      i,
      [this, name, incarnation, term, seq, view, resume] {
        return resume ? store_.resume(name, incarnation, term.token, seq, view, now_)
                      : store_.renew(name, incarnation, term.token, seq, view, now_);
      },
      [this, i, sent, seq, term, resume](const store_answer& a) {
        renewal_answered(i, sent, seq, term, resume, a);
      },
      [this, i, term] { renewal_failed(i, term); });
}

void model::renewal_answered(std::size_t i, time_point sent, std::uint64_t seq, const term_id& term,
                             bool resume, const store_answer& a) {
  auto& n = nodes_[i];
  if (!n.leading || n.term != term) return;
  const time_point now = local(i);
  if (now >= n.deadline) return term_over(i, "its deadline passed");
  if (a.what == store_answer::lost) {
    if (!resume) {
      // F8: the key is gone (expired during an outage, or the store lost
      // it): take the same term up again, if nobody else did.
      send_renewal(i, true);
      return;
    }
    trace([&] { return n.name + " finds another term: stops at once"; });
    return term_over(i, "another term in the store");
  }
  n.list->acknowledged(seq);
  n.registry_view = a.registry;
  if (a.what == store_answer::resumed) {
    ++figures_.resumes;
    trace([&] { return n.name + " resumed token " + std::to_string(n.term.token); });
  }
  note_on_confirmations(i);
  n.rounds.reset();  // the store is back: no more rounds
  n.store_valid = std::max(n.store_valid, sent + timing_.ttl - timing_.drift);
  moved_deadline(i, n.store_valid);
}

void model::renewal_failed(std::size_t i, const term_id& term) {
  auto& n = nodes_[i];
  if (!n.leading || n.term != term) return;
  const time_point now = local(i);
  if (now >= n.deadline) return term_over(i, "its deadline passed");
  // F3: the store could not be reached.
  if (!n.rounds) n.rounds.emplace(n.term, timing_, n.deadline);
  if (n.last_round && now - *n.last_round < milliseconds{renew_interval_us / 1000}) return;
  std::ostringstream nonce;
  nonce << n.name << '-' << n.incarnation << '-' << ++n.nonce;
  const auto requests = n.rounds->begin_round(*n.list, nonce.str(), now);
  if (requests.empty()) return;
  n.last_round = now;
  for (const auto& r : requests) ask_to_confirm(i, r);
}

void model::ask_to_confirm(std::size_t i, const confirm_request& r) {
  const std::size_t j = index_of(r.peer);
  send_peer(i, j, [this, i, j, r] {
    auto& p = nodes_[j];
    const confirm_answer answer =
        p.peer->on_confirm(r.term, r.sent_ms, local(j), p.leading || p.app_running);
    const std::string answerer = p.name;
    send_peer(j, i, [this, i, r, answerer, answer] {
      auto& n = nodes_[i];
      if (!n.leading || n.term != r.term || !n.rounds) return;
      const time_point now = local(i);
      if (!answer.confirmed) {
        n.rounds->refused(answerer, r.nonce, r.sent_ms, answer.reason);
        return;
      }
      const auto got = n.rounds->confirmed(answerer, r.nonce, r.sent_ms, answer.promise, now);
      if (got == confirmation_rounds::outcome::too_late) {
        return term_over(i, "its deadline passed");
      }
      if (got != confirmation_rounds::outcome::round_complete) return;
      ++figures_.counted_rounds;
      const time_point until = n.rounds->deadline();
      if (now >= n.store_valid) ++figures_.beyond_store;
      trace([&] { return n.name + " counted a round"; });
      moved_deadline(i, until);
    });
  });
}

// A voluntary stop: the app first, then the release (rule 3).
void model::resign(std::size_t i, std::uint64_t token) {
  auto& n = nodes_[i];
  if (!n.leading || n.term.token != token) return;
  const std::string name = n.name;
  const int incarnation = n.incarnation;
  n.leading = false;
  n.rounds.reset();
  n.list.reset();
  stop_app(i, "it resigns");
  if (n.call != 0) n.call = 0;
  call_store(
      i,
      [this, name, incarnation, token] { return store_.release(name, incarnation, token, now_); },
      [this, i](const store_answer&) {
        at_node(i, now_ + pick(ttl_us, 3 * ttl_us), [this, i] { try_acquire(i); });
      },
      [this, i] { at_node(i, now_ + pick(ttl_us, 3 * ttl_us), [this, i] { try_acquire(i); }); });
}

}  // namespace baton::testing
