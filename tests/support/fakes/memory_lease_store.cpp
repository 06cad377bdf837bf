// The memory store: the backend's state is plain data per election; each store
// keeps its calls in flight in a table (call id -> completion, abort), so that
// whichever comes first, the latency running out or close(), takes the call
// out of the table and runs it: exactly once. Everything that reaches a
// handler or a listener is posted and guarded by a weak pointer to the store.
#include "support/fakes/memory_lease_store.hpp"

#include <algorithm>
#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/system/error_code.hpp>
#include <functional>
#include <map>
#include <stdexcept>
#include <utility>
#include <vector>

#include "store/store_shell.hpp"

namespace baton::testing {
namespace {

namespace asio = boost::asio;

class memory_category_impl final : public std::error_category {
 public:
  const char* name() const noexcept override { return "baton.memory"; }
  std::string message(int value) const override {
    switch (static_cast<memory_errc>(value)) {
      case memory_errc::unavailable: return "memory store unavailable";
    }
    return "unknown memory store error " + std::to_string(value);
  }
  std::error_condition default_error_condition(int value) const noexcept override {
    switch (static_cast<memory_errc>(value)) {
      case memory_errc::unavailable: return store_errc::unavailable;
    }
    return {value, *this};
  }
};

using store_detail::store_shell;

// Time left until `until`, rounded up so that a lease not yet over never
// reads as 0 ms.
milliseconds left(time_point until, time_point now) {
  if (until <= now) return milliseconds{0};
  return std::chrono::ceil<milliseconds>(until - now);
}

}  // namespace

const std::error_category& memory_store_category() noexcept {
  static const memory_category_impl category;
  return category;
}

std::error_code make_error_code(memory_errc e) noexcept {
  return {static_cast<int>(e), memory_store_category()};
}

// One election on the backend.
struct election_state {
  std::string holder;  // "" = free
  std::uint64_t token = 0;
  time_point expires{};
  std::uint64_t counter = 0;
  bool recorded = false;  // async_create_record or a first acquire made it
  time_point fence_until{};
  // The longest ttl of any store made for this election: the default hold-back.
  milliseconds longest_ttl{0};
  // A switchover's reservation: only `reserved_for` may take the free lease
  // before `reserved_until`; `handed_over_by` handed it over.
  std::string reserved_for;
  std::string handed_over_by;
  time_point reserved_until{};
  // The registry: node id -> its priority, when it registered without a
  // gap, and when its registration lapses.
  struct registration {
    int priority = 0;
    time_point since{};
    time_point until{};
    time_point attempted{};
    time_point cooling_until{};  ///< register_cooldown's; an attempt clears it
    std::string card;
  };
  std::map<std::string, registration> candidates;

  void expire_if_due(time_point now) {
    if (!holder.empty() && now >= expires) {
      holder.clear();
      token = 0;
    }
    if (!reserved_for.empty() && now >= reserved_until) {
      reserved_for.clear();
      handed_over_by.clear();
    }
  }

  void register_candidate(const store_identity& id, time_point now) {
    auto& r = candidates[id.node_id];
    if (r.until <= now) r.since = now;
    r.priority = id.priority;
    r.card = id.card;
    r.until = now + 2 * id.ttl;
    r.attempted = now;
    r.cooling_until = {};
  }
};

struct memory_lease_backend::state {
  milliseconds latency{0};
  bool unavailable = false;
  std::map<std::string, election_state> elections;
  // Every store alive on this backend (each removes itself when destroyed).
  std::vector<memory_lease_store::impl*> stores;
};

struct memory_lease_store::impl {
  struct pending_call {
    std::function<void()> complete;  // applies the call and runs its handler
    std::function<void()> abort;     // posts operation_aborted to its handler
    std::unique_ptr<asio::steady_timer> timer;
  };

  impl(asio::io_context& context, std::shared_ptr<memory_lease_backend::state> b,
       store_identity identity)
      : io(context), shell(context), backend(std::move(b)), id(std::move(identity)) {
    auto& e = election();
    e.longest_ttl = std::max(e.longest_ttl, id.ttl);
    backend->stores.push_back(this);
  }

  ~impl() {
    shell.retire();
    auto& all = backend->stores;
    all.erase(std::remove(all.begin(), all.end(), this), all.end());
  }

  election_state& election() { return backend->elections[id.election]; }

  // Runs the call after the backend's latency, unless close() comes first.
  template <typename T>
  void start(std::function<void(store_error, T)> handler, std::function<T()> apply) {
    if (shell.reject_if_closed(handler)) return;
    const auto call = next_call++;
    auto shared = std::make_shared<std::function<void(store_error, T)>>(std::move(handler));
    pending_call p;
    p.complete = [this, shared, apply = std::move(apply)] {
      if (backend->unavailable) {
        (*shared)(shell.note_failure({memory_errc::unavailable, "memory store unavailable"}), T{});
        return;
      }
      T answer = apply();
      (*shared)(store_error{}, std::move(answer));
    };
    p.abort = [this, shared] {
      asio::post(io, [weak = shell.guard(), shared] {
        if (!weak.expired()) (*shared)(store_shell::aborted(), T{});
      });
    };
    const auto latency = backend->latency;
    if (latency > milliseconds::zero()) {
      p.timer = std::make_unique<asio::steady_timer>(io, latency);
      p.timer->async_wait([this, weak = shell.guard(), call](const boost::system::error_code&) {
        if (!weak.expired()) finish(call);
      });
    } else {
      asio::post(io, [this, weak = shell.guard(), call] {
        if (!weak.expired()) finish(call);
      });
    }
    pending.emplace(call, std::move(p));
  }

  void finish(std::uint64_t call) {
    auto it = pending.find(call);
    if (it == pending.end()) return;  // close() aborted it
    auto p = std::move(it->second);
    pending.erase(it);
    // The handler may close or destroy the store: nothing touches `this` after.
    p.complete();
  }

  // Posts `e` to the listener (any event the store finds itself).
  void tell(store_event e) {
    if (!shell.listening()) return;
    asio::post(io, [this, weak = shell.guard(), e = std::move(e)] {
      if (!weak.expired()) shell.emit(e);
    });
  }

  // An announcement arrives only over a watch that is up.
  void hear(const store_event& e) {
    if (wakeups == wakeup_state::subscribed) tell(e);
  }

  // Every watching store of this election, but those of node `except`.
  void announce(const store_event& e, const std::string& except = {}) {
    for (auto* s : backend->stores) {
      if (s->id.election == id.election && s->id.node_id != except) s->hear(e);
    }
  }

  // The watch comes up, unless the backend is unavailable.
  void subscribe() {
    if (shell.closed()) return;
    if (backend->unavailable) {
      wakeups = wakeup_state::disconnected;
      return;
    }
    wakeups = wakeup_state::subscribed;
    tell(store_events::wakeups{true, {}});
    // As after a Redis resubscribe: a release may have gone unheard.
    if (ever_subscribed) tell(store_events::released{});
    ever_subscribed = true;
  }

  void watch_down() {
    if (shell.closed() || wakeups != wakeup_state::subscribed) return;
    wakeups = wakeup_state::disconnected;
    tell(store_events::wakeups{false, {}});
  }

  acquire_answer do_acquire() {
    const auto now = mono_clock::now();
    auto& e = election();
    e.expire_if_due(now);
    e.register_candidate(id, now);
    const bool fenced = e.fence_until > now;
    const bool reserved_elsewhere = !e.reserved_for.empty() && e.reserved_for != id.node_id;
    acquire_answer a;
    if (!fenced && !reserved_elsewhere && (e.holder.empty() || e.holder == id.node_id)) {
      const bool was_free = e.holder.empty();
      e.reserved_for.clear();
      e.handed_over_by.clear();
      e.holder = id.node_id;
      e.expires = now + id.ttl;
      e.token = ++e.counter;
      e.recorded = true;
      a.outcome = acquire_outcome::acquired;
      a.token = e.token;
      if (was_free) announce(store_events::acquired{id.node_id, e.token});
      return a;
    }
    a.token = e.counter;
    a.holder = e.holder;
    a.outranked_by = 0;
    for (const auto& [node, r] : e.candidates) {
      if (r.until > now && node != id.node_id && node != e.holder && r.priority > id.priority) {
        ++a.outranked_by;
      }
    }
    if (!fenced && reserved_elsewhere) {
      a.outcome = acquire_outcome::held;
      a.holder = e.handed_over_by;
      a.reserved_for = e.reserved_for;
      a.remaining = left(e.reserved_until, now);
      return a;
    }
    if (!fenced) {
      a.outcome = acquire_outcome::held;
      a.remaining = left(e.expires, now);
      return a;
    }
    a.outcome = acquire_outcome::held_back;
    auto until = e.fence_until;
    if (!e.holder.empty()) until = std::max(until, e.expires);
    a.remaining = left(until, now);
    return a;
  }

  renew_answer do_renew() {
    const auto now = mono_clock::now();
    auto& e = election();
    e.expire_if_due(now);
    if (e.holder != id.node_id) return renew_answer::lost;
    e.register_candidate(id, now);
    e.expires = now + id.ttl;
    return renew_answer::renewed;
  }

  record_answer do_create_record() {
    auto& e = election();
    if (e.recorded) return record_answer::existed;
    e.recorded = true;
    return record_answer::created;
  }

  release_answer do_release() {
    auto& e = election();
    e.expire_if_due(mono_clock::now());
    if (e.holder != id.node_id) return release_answer::not_ours;
    e.holder.clear();
    e.token = 0;
    announce(store_events::released{}, id.node_id);
    return release_answer::released;
  }

  release_answer do_hand_over(const std::string& to_node, milliseconds window) {
    const auto now = mono_clock::now();
    auto& e = election();
    e.expire_if_due(now);
    if (e.holder != id.node_id) return release_answer::not_ours;
    e.holder.clear();
    e.token = 0;
    e.reserved_for = to_node;
    e.handed_over_by = id.node_id;
    e.reserved_until = now + window;
    announce(store_events::released{}, id.node_id);
    return release_answer::released;
  }

  std::vector<candidate_info> do_candidates() {
    const auto now = mono_clock::now();
    std::vector<candidate_info> out;
    auto& all = election().candidates;
    for (auto it = all.begin(); it != all.end();) {
      if (it->second.until <= now) {
        it = all.erase(it);
        continue;
      }
      const auto& r = it->second;
      out.push_back({it->first, r.priority, std::chrono::floor<milliseconds>(now - r.since),
                     std::chrono::floor<milliseconds>(now - r.attempted),
                     r.cooling_until > now ? std::chrono::ceil<milliseconds>(r.cooling_until - now)
                                           : milliseconds(0)});
      out.back().card = r.card;
      ++it;
    }
    return out;
  }

  asio::io_context& io;
  // Closed, the listener, the last error and reset, as a store kind's.
  store_shell shell;
  std::shared_ptr<memory_lease_backend::state> backend;
  store_identity id;
  wakeup_state wakeups = wakeup_state::off;
  bool ever_subscribed = false;
  std::map<std::uint64_t, pending_call> pending;
  std::uint64_t next_call = 1;
};

// --- the backend -------------------------------------------------------------

memory_lease_backend::memory_lease_backend(milliseconds latency)
    : state_(std::make_shared<state>()) {
  state_->latency = latency;
}

memory_lease_backend::~memory_lease_backend() = default;

void memory_lease_backend::set_latency(milliseconds latency) { state_->latency = latency; }

void memory_lease_backend::reset(std::string why, std::optional<milliseconds> hold_back) {
  const auto now = mono_clock::now();
  for (auto& [name, e] : state_->elections) {
    e.holder.clear();
    e.token = 0;
    const auto hold = hold_back.value_or(e.longest_ttl > milliseconds::zero() ? e.longest_ttl
                                                                             : milliseconds{1000});
    e.fence_until = std::max(e.fence_until, now + hold);
  }
  for (auto* s : state_->stores) {
    if (s->shell.closed()) continue;
    s->shell.note_reset(why);
    s->tell(store_events::reset{why, false, {}});
  }
}

void memory_lease_backend::set_unavailable(bool unavailable) {
  if (state_->unavailable == unavailable) return;
  state_->unavailable = unavailable;
  for (auto* s : state_->stores) {
    if (unavailable) {
      s->watch_down();
    } else if (s->wakeups == wakeup_state::disconnected) {
      s->subscribe();
    }
  }
}

bool memory_lease_backend::unavailable() const { return state_->unavailable; }

void memory_lease_backend::expire(const std::string& election) {
  auto& e = state_->elections[election];
  e.holder.clear();
  e.token = 0;
}

memory_lease_view memory_lease_backend::view(const std::string& election) const {
  const auto now = mono_clock::now();
  auto& e = state_->elections[election];
  e.expire_if_due(now);
  memory_lease_view v;
  v.holder = e.holder;
  v.token = e.token;
  v.remaining = e.holder.empty() ? milliseconds{0} : left(e.expires, now);
  v.counter = e.counter;
  v.hold_back = left(e.fence_until, now);
  return v;
}

// --- the store ---------------------------------------------------------------

memory_lease_store::memory_lease_store(boost::asio::io_context& io,
                                       memory_lease_backend& backend, store_identity identity) {
  require_valid_identity(identity, "memory_lease_store");
  impl_ = std::make_unique<impl>(io, backend.state_, std::move(identity));
}

memory_lease_store::~memory_lease_store() = default;

const store_identity& memory_lease_store::identity() const { return impl_->id; }

void memory_lease_store::async_acquire(acquire_handler handler) {
  auto& d = *impl_;
  d.start<acquire_answer>(std::move(handler), [&d] { return d.do_acquire(); });
}

void memory_lease_store::async_renew(renew_handler handler) {
  auto& d = *impl_;
  d.start<renew_answer>(std::move(handler), [&d] { return d.do_renew(); });
}

void memory_lease_store::async_release(release_handler handler) {
  auto& d = *impl_;
  d.start<release_answer>(std::move(handler), [&d] { return d.do_release(); });
}

void memory_lease_store::async_hand_over(const std::string& to_node, milliseconds window,
                                         release_handler handler) {
  auto& d = *impl_;
  d.start<release_answer>(std::move(handler),
                          [&d, to_node, window] { return d.do_hand_over(to_node, window); });
}

void memory_lease_store::async_candidates(candidates_handler handler) {
  auto& d = *impl_;
  d.start<std::vector<candidate_info>>(std::move(handler), [&d] { return d.do_candidates(); });
}

void memory_lease_store::register_cooldown(milliseconds cooldown) {
  auto& d = *impl_;
  if (d.shell.closed() || d.backend->unavailable) return;
  const auto now = mono_clock::now();
  auto& all = d.election().candidates;
  if (auto it = all.find(d.id.node_id); it != all.end() && it->second.until > now) {
    it->second.cooling_until = now + cooldown;
  }
}

void memory_lease_store::update_card(std::string card) { impl_->id.card = std::move(card); }

void memory_lease_store::async_look(look_handler handler) {
  auto& d = *impl_;
  d.start<lease_holder>(std::move(handler), [&d] {
    const auto now = mono_clock::now();
    auto& e = d.election();
    e.expire_if_due(now);
    e.register_candidate(d.id, now);
    return e.holder.empty() ? lease_holder{} : lease_holder{e.holder, e.token};
  });
}

void memory_lease_store::async_create_record(record_handler handler) {
  auto& d = *impl_;
  d.start<record_answer>(std::move(handler), [&d] { return d.do_create_record(); });
}

void memory_lease_store::watch(event_listener listener) {
  auto& d = *impl_;
  if (!d.shell.set_listener(std::move(listener))) return;
  if (d.wakeups != wakeup_state::off) return;
  d.wakeups = wakeup_state::connecting;
  boost::asio::post(d.io, [&d, weak = d.shell.guard()] {
    if (!weak.expired() && d.wakeups == wakeup_state::connecting) d.subscribe();
  });
}

store_status memory_lease_store::status() const {
  const auto& d = *impl_;
  store_status s;
  s.kind = "memory";
  s.label = "in-memory";
  s.endpoint = "memory";
  s.link = d.shell.closed() || d.backend->unavailable ? link_state::disconnected
                                                      : link_state::connected;
  s.wakeups = d.shell.closed() ? wakeup_state::off : d.wakeups;
  d.shell.fill_status(s);
  return s;
}

void memory_lease_store::close() {
  auto& d = *impl_;
  if (!d.shell.close()) return;
  d.wakeups = wakeup_state::off;
  auto calls = std::move(d.pending);
  d.pending.clear();
  for (auto& [call, p] : calls) {
    if (p.timer) p.timer->cancel();
    p.abort();
  }
}

std::size_t memory_lease_store::in_flight() const { return impl_->pending.size(); }

}  // namespace baton::testing
