#include "contract_calls.hpp"

#include <boost/asio/steady_timer.hpp>
#include <system_error>
#include <variant>

namespace baton::contract {

namespace asio = boost::asio;

bool run_until(asio::io_context& io, const std::function<bool()>& done, milliseconds within) {
  const auto deadline = std::chrono::steady_clock::now() + within;
  while (!done()) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) return false;
    if (io.stopped()) io.restart();
    if (io.run_one_for(deadline - now) == 0 && io.stopped() && !done()) {
      // Out of work: only time can help, and nothing waits on it.
      return false;
    }
  }
  return true;
}

void pass(asio::io_context& io, milliseconds d) {
  asio::steady_timer timer(io, d);
  bool fired = false;
  timer.async_wait([&](const boost::system::error_code&) { fired = true; });
  ASSERT_TRUE(run_until(
      io, [&] { return fired; }, d + limit));
}

std::shared_ptr<outcome<acquire_answer>> start_acquire(lease_store& s) {
  auto out = collect<acquire_answer>();
  s.async_acquire(into(out));
  return out;
}
std::shared_ptr<outcome<renew_answer>> start_renew(lease_store& s) {
  auto out = collect<renew_answer>();
  s.async_renew(into(out));
  return out;
}
std::shared_ptr<outcome<release_answer>> start_release(lease_store& s) {
  auto out = collect<release_answer>();
  s.async_release(into(out));
  return out;
}

outcome<acquire_answer> acquire(asio::io_context& io, lease_store& s) {
  return await(io, start_acquire(s), "acquire");
}
outcome<renew_answer> renew(asio::io_context& io, lease_store& s) {
  return await(io, start_renew(s), "renew");
}
outcome<release_answer> release(asio::io_context& io, lease_store& s) {
  return await(io, start_release(s), "release");
}
outcome<std::vector<candidate_info>> candidates(asio::io_context& io, lease_store& s) {
  return called<std::vector<candidate_info>>(io, "candidates",
                                             [&](auto h) { s.async_candidates(std::move(h)); });
}
const candidate_info* find_candidate(const std::vector<candidate_info>& all,
                                     const std::string& node) {
  for (const auto& c : all)
    if (c.node == node) return &c;
  return nullptr;
}

outcome<release_answer> hand_over(asio::io_context& io, lease_store& s, const std::string& to,
                                  milliseconds window) {
  auto out = collect<release_answer>();
  s.async_hand_over(to, window, into(out));
  return await(io, out, "hand_over");
}

outcome<record_answer> create_record(asio::io_context& io, lease_store& s) {
  auto out = collect<record_answer>();
  s.async_create_record(into(out));
  return await(io, out, "create_record");
}

std::shared_ptr<heard> watch(lease_store& s) {
  auto h = std::make_shared<heard>();
  s.watch([h](const store_event& e) {
    ++h->events;
    if (std::holds_alternative<store_events::released>(e)) ++h->released;
    if (const auto* t = std::get_if<store_events::acquired>(&e)) h->terms.push_back(*t);
    if (const auto* r = std::get_if<store_events::reset>(&e)) h->resets.push_back(r->why);
    if (const auto* w = std::get_if<store_events::wakeups>(&e)) h->wakeups.push_back(w->trusted);
  });
  return h;
}

bool is_aborted(const store_error& e) {
  return e.code == std::errc::operation_canceled;
}

std::string describe(const acquire_answer& a) {
  const char* outcome = a.outcome == acquire_outcome::acquired ? "acquired"
                        : a.outcome == acquire_outcome::held   ? "held"
                                                               : "held_back";
  return std::string(outcome) + " token=" + std::to_string(a.token) + " holder='" + a.holder +
         "' remaining=" + std::to_string(a.remaining.count()) + "ms" +
         (a.reserved_for.empty() ? "" : " reserved_for='" + a.reserved_for + "'");
}

}  // namespace baton::contract
