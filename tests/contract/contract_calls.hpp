// The port's calls as the contract's cases make them: each started, its one
// answer collected, and the io_context run until it arrives or a bounded
// wait passes. Shared by every file of cases (lease_store_contract.cpp,
// candidate_card_contract.cpp, failsafe_contract.cpp).
#pragma once

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "baton/lease_store.hpp"
#include "baton/time.hpp"

namespace baton::contract {

using namespace std::chrono_literals;

/// The longest any single call or event may take to arrive.
inline constexpr milliseconds limit{10s};
/// The lease ttl of a store unless a case needs it to run out.
inline constexpr milliseconds ttl{2000};
/// For cases that wait for a lease to run out.
inline constexpr milliseconds short_ttl{1000};

/// Runs `io` until `done()` or `within` passes; false on timeout, or when
/// nothing is left that could make `done()` true.
bool run_until(boost::asio::io_context& io, const std::function<bool()>& done,
               milliseconds within = limit);

/// Lets `d` of wall time pass while `io` runs (a timer keeps it busy).
void pass(boost::asio::io_context& io, milliseconds d);

template <typename T>
struct outcome {
  int calls = 0;
  store_error error;
  T value{};
};

/// The call's outcome lands in a shared object, so that a handler running
/// after the test gave up stays harmless.
template <typename T>
std::shared_ptr<outcome<T>> collect() {
  return std::make_shared<outcome<T>>();
}

template <typename T>
std::function<void(store_error, T)> into(const std::shared_ptr<outcome<T>>& out) {
  return [out](store_error e, T v) {
    ++out->calls;
    out->error = std::move(e);
    out->value = std::move(v);
  };
}

template <typename T>
outcome<T> await(boost::asio::io_context& io, const std::shared_ptr<outcome<T>>& out,
                 const char* what) {
  EXPECT_TRUE(run_until(io, [&] { return out->calls > 0; })) << what << " never completed";
  return *out;
}

/// Starts `start(handler)` and awaits its answer.
template <typename T, typename Start>
outcome<T> called(boost::asio::io_context& io, const char* what, Start&& start) {
  auto out = collect<T>();
  std::forward<Start>(start)(into(out));
  return await(io, out, what);
}

std::shared_ptr<outcome<acquire_answer>> start_acquire(lease_store& s);
std::shared_ptr<outcome<renew_answer>> start_renew(lease_store& s);
std::shared_ptr<outcome<release_answer>> start_release(lease_store& s);

outcome<acquire_answer> acquire(boost::asio::io_context& io, lease_store& s);
outcome<renew_answer> renew(boost::asio::io_context& io, lease_store& s);
outcome<release_answer> release(boost::asio::io_context& io, lease_store& s);
outcome<std::vector<candidate_info>> candidates(boost::asio::io_context& io, lease_store& s);
const candidate_info* find_candidate(const std::vector<candidate_info>& all,
                                     const std::string& node);

/// After a reset a store may need a call or two to reconnect: retries a few
/// times, 100 ms apart, while the call fails.
template <typename T>
outcome<T> answered(boost::asio::io_context& io, const std::function<outcome<T>()>& call) {
  outcome<T> out;
  for (int i = 0; i < 5; ++i) {
    out = call();
    if (!out.error) break;
    pass(io, 100ms);
  }
  return out;
}

outcome<release_answer> hand_over(boost::asio::io_context& io, lease_store& s,
                                  const std::string& to, milliseconds window);
outcome<record_answer> create_record(boost::asio::io_context& io, lease_store& s);

/// What a store's watcher heard.
struct heard {
  int events = 0;
  int released = 0;
  std::vector<store_events::acquired> terms;
  std::vector<std::string> resets;
  std::vector<bool> wakeups;

  bool trusted() const { return !wakeups.empty() && wakeups.back(); }
};

/// Starts watching `s`; what it hears lands in the answer.
std::shared_ptr<heard> watch(lease_store& s);

bool is_aborted(const store_error& e);

/// An answer in one line, for failure messages.
std::string describe(const acquire_answer& a);

}  // namespace baton::contract
