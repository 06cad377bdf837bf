// store_shell: see store_shell.hpp.
#include "store_shell.hpp"

#include <boost/asio/error.hpp>
#include <boost/asio/post.hpp>
#include <boost/system/error_code.hpp>
#include <utility>

namespace baton::store_detail {

store_shell::store_shell(boost::asio::io_context& io) : io_(io) {}

store_error store_shell::aborted() {
  return {boost::system::error_code(boost::asio::error::operation_aborted), {}};
}

bool store_shell::close() {
  if (closed_) return false;
  closed_ = true;
  listener_ = nullptr;
  return true;
}

void store_shell::post_guarded(std::function<void()> fn) {
  boost::asio::post(io_, [weak = guard(), fn = std::move(fn)] {
    if (!weak.expired()) fn();
  });
}

bool store_shell::set_listener(lease_store::event_listener listener) {
  if (closed_) return false;
  listener_ = std::move(listener);
  return true;
}

void store_shell::emit(const store_event& e) {
  if (!listening()) return;
  auto call = listener_;
  call(e);
}

void store_shell::set_wakeups(bool trusted, std::string why) {
  if (trusted == wakeups_trusted_ && why == wakeups_why_) return;
  wakeups_trusted_ = trusted;
  wakeups_why_ = why;
  emit(store_events::wakeups{trusted, std::move(why)});
}

void store_shell::set_wakeups_trust(bool trusted) {
  set_wakeups(trusted, trusted ? std::string() : wakeups_why_);
}

store_error store_shell::note_failure(store_error e) {
  last_error_ = e.message();
  last_error_kind_ = store_error_kind(e.code);
  last_error_at_ = mono_clock::now();
  return e;
}

void store_shell::note_reset(std::string why) {
  last_reset_ = std::move(why);
}

void store_shell::report_reset(store_events::reset r) {
  last_reset_ = r.why;
  emit(r);
}

void store_shell::fill_status(store_status& s) const {
  s.last_error = last_error_;
  s.last_error_kind = last_error_kind_;
  s.last_error_at = last_error_at_;
  s.last_reset = last_reset_;
}

}  // namespace baton::store_detail
