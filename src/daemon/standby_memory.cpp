// When a standby gives back its start-up's pages (see standby_memory.hpp).
#include "standby_memory.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "startup_pages.hpp"

namespace baton {

standby_memory::standby_memory(boost::asio::io_context& io, milliseconds ttl,
                               std::function<bool()> standing_by,
                               std::function<bool(milliseconds)> attempt_due_within)
    : timer_(io),
      ttl_(ttl),
      standing_by_(std::move(standing_by)),
      attempt_due_within_(std::move(attempt_due_within)) {}

void standby_memory::startup_work_done() {
  startup_work_done_ = true;
  give_back_soon();
}

void standby_memory::give_back_soon(int postponed) {
  if (!startup_work_done_) return;
  timer_.expires_after(std::chrono::seconds(1));
  timer_.async_wait([this, postponed](const boost::system::error_code& ec) {
    if (ec || !standing_by_()) return;
    if (attempt_due_within_(std::min<milliseconds>(milliseconds(500), ttl_ / 4))) {
      if (postponed < 10) give_back_soon(postponed + 1);
      return;
    }
    const auto began = mono_clock::now();
    const auto given = give_back_startup_pages();
    if (!given.error.empty()) {
      spdlog::debug("standby memory: {}", given.error);
      return;
    }
    spdlog::debug(
        "standby memory: gave back {} KB of read-only file pages ({} mappings, {} refused) in "
        "{} us",
        given.resident_kb, given.mappings, given.refused,
        std::chrono::duration_cast<std::chrono::microseconds>(mono_clock::now() - began).count());
  });
}

}  // namespace baton
