// The scripted store: three queues of pending handlers, budgets of allowed
// calls, and a weak guard on everything posted.
#include "support/fakes/scripted_lease_store.hpp"

#include <gtest/gtest.h>

#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <boost/system/error_code.hpp>
#include <utility>

namespace baton::testing {
namespace {

store_error aborted() {
  return {boost::system::error_code(boost::asio::error::operation_aborted), {}};
}

}  // namespace

namespace answers {

acquire_answer acquired(std::uint64_t token) {
  acquire_answer a;
  a.outcome = acquire_outcome::acquired;
  a.token = token;
  return a;
}

acquire_answer held(std::string holder, std::uint64_t token, milliseconds remaining) {
  acquire_answer a;
  a.outcome = acquire_outcome::held;
  a.holder = std::move(holder);
  a.token = token;
  a.remaining = remaining;
  return a;
}

acquire_answer held_back(milliseconds remaining, std::uint64_t token) {
  acquire_answer a;
  a.outcome = acquire_outcome::held_back;
  a.token = token;
  a.remaining = remaining;
  return a;
}

}  // namespace answers

scripted_lease_store::scripted_lease_store(boost::asio::io_context& io, store_identity identity)
    : io_(io), identity_(std::move(identity)) {
  status_.kind = "scripted";
  status_.label = "scripted";
  status_.endpoint = "scripted";
  status_.link = link_state::connected;
}

scripted_lease_store::~scripted_lease_store() { alive_.reset(); }

template <typename Handler, typename... Args>
void scripted_lease_store::post(Handler handler, Args... args) {
  boost::asio::post(io_, [weak = std::weak_ptr<int>(alive_), handler = std::move(handler),
                          args...]() mutable {
    if (!weak.expired()) handler(std::move(args)...);
  });
}

void scripted_lease_store::expect_acquire(int times) { acquires_allowed_ += times; }
void scripted_lease_store::expect_renew(int times) { renews_allowed_ += times; }
void scripted_lease_store::expect_release(int times) { releases_allowed_ += times; }
void scripted_lease_store::allow_any(bool on) { allow_any_ = on; }

void scripted_lease_store::verify_expectations() {
  if (acquires_allowed_ > 0) ADD_FAILURE() << acquires_allowed_ << " expected acquire(s) not made";
  if (renews_allowed_ > 0) ADD_FAILURE() << renews_allowed_ << " expected renew(s) not made";
  if (releases_allowed_ > 0) ADD_FAILURE() << releases_allowed_ << " expected release(s) not made";
  acquires_allowed_ = renews_allowed_ = releases_allowed_ = 0;
}

bool scripted_lease_store::allowed(const char* kind, int& budget) {
  if (budget > 0) {
    --budget;
    return true;
  }
  if (allow_any_) return true;
  ADD_FAILURE() << "scripted_lease_store(" << identity_.node_id << "): unexpected async_" << kind
                << " (call #" << calls_.size() << "; calls so far: "
                << ::testing::PrintToString(calls_) << ")";
  return false;
}

void scripted_lease_store::async_acquire(acquire_handler handler) {
  ++acquire_calls_;
  calls_.emplace_back("acquire");
  allowed("acquire", acquires_allowed_);
  if (closed_) {
    post(std::move(handler), aborted(), acquire_answer{});
    return;
  }
  acquires_.push_back(std::move(handler));
}

void scripted_lease_store::async_renew(renew_handler handler) {
  ++renew_calls_;
  calls_.emplace_back("renew");
  allowed("renew", renews_allowed_);
  if (closed_) {
    post(std::move(handler), aborted(), renew_answer::lost);
    return;
  }
  renews_.push_back(std::move(handler));
}

void scripted_lease_store::async_release(release_handler handler) {
  ++release_calls_;
  calls_.emplace_back("release");
  allowed("release", releases_allowed_);
  if (closed_) {
    post(std::move(handler), aborted(), release_answer::not_ours);
    return;
  }
  releases_.push_back(std::move(handler));
}

void scripted_lease_store::async_create_record(record_handler handler) {
  calls_.emplace_back("create_record");
  // The driver never creates records (`baton init-store` does): always unexpected
  // unless allow_any; answered at once.
  int none = 0;
  allowed("create_record", none);
  post(std::move(handler), closed_ ? aborted() : store_error{}, record_answer::existed);
}

void scripted_lease_store::async_hand_over(const std::string&, milliseconds,
                                           release_handler handler) {
  calls_.emplace_back("hand_over");
  int none = 0;
  allowed("hand_over", none);
  post(std::move(handler), closed_ ? aborted() : store_error{}, release_answer::not_ours);
}

// A read the driver makes as a leader renews (and for a status): always
// allowed, not recorded among the calls, answered with no candidates.
void scripted_lease_store::async_candidates(candidates_handler handler) {
  post(std::move(handler), closed_ ? aborted() : store_error{}, std::vector<candidate_info>{});
}

void scripted_lease_store::async_look(look_handler handler) {
  ++looks;
  post(std::move(handler), closed_ ? aborted() : store_error{}, look_answer);
}

void scripted_lease_store::answer_acquire(store_error error, acquire_answer answer) {
  if (acquires_.empty()) {
    ADD_FAILURE() << "answer_acquire: no acquire pending";
    return;
  }
  auto handler = std::move(acquires_.front());
  acquires_.pop_front();
  post(std::move(handler), std::move(error), std::move(answer));
}

void scripted_lease_store::answer_renew(store_error error, renew_answer answer) {
  if (renews_.empty()) {
    ADD_FAILURE() << "answer_renew: no renew pending";
    return;
  }
  auto handler = std::move(renews_.front());
  renews_.pop_front();
  post(std::move(handler), std::move(error), answer);
}

void scripted_lease_store::answer_release(store_error error, release_answer answer) {
  if (releases_.empty()) {
    ADD_FAILURE() << "answer_release: no release pending";
    return;
  }
  auto handler = std::move(releases_.front());
  releases_.pop_front();
  post(std::move(handler), std::move(error), answer);
}

void scripted_lease_store::watch(event_listener listener) {
  ++watch_calls_;
  calls_.emplace_back("watch");
  if (closed_) return;
  listener_ = std::move(listener);
}

void scripted_lease_store::emit(store_event event) {
  if (closed_) return;
  if (!listener_) {
    ADD_FAILURE() << "emit: nobody watches scripted_lease_store(" << identity_.node_id << ")";
    return;
  }
  boost::asio::post(io_, [this, weak = std::weak_ptr<int>(alive_), event = std::move(event)] {
    if (weak.expired() || closed_ || !listener_) return;
    // A copy: the listener may close or destroy the store while it runs.
    auto call = listener_;
    call(event);
  });
}

void scripted_lease_store::set_status(store_status status) { status_ = std::move(status); }

void scripted_lease_store::close() {
  ++close_calls_;
  calls_.emplace_back("close");
  if (closed_) return;
  closed_ = true;
  listener_ = nullptr;
  auto acquires = std::move(acquires_);
  auto renews = std::move(renews_);
  auto releases = std::move(releases_);
  acquires_.clear();
  renews_.clear();
  releases_.clear();
  for (auto& h : acquires) post(std::move(h), aborted(), acquire_answer{});
  for (auto& h : renews) post(std::move(h), aborted(), renew_answer::lost);
  for (auto& h : releases) post(std::move(h), aborted(), release_answer::not_ours);
}

}  // namespace baton::testing
