// The election machine's timers on a real io_context
// (src/daemon/machine_timers.hpp): a timer that fires is posted as its
// events::timer, a cancelled or re-armed one never fires for its old arm, and
// one far past its due time is said as a stall, except the gate's. The
// timers are armed at times already past, so nothing waits on the clock;
// every run is bounded.
#include "daemon/machine_timers.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <memory>
#include <sstream>
#include <vector>

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

namespace baton {
namespace {

using namespace std::chrono_literals;

// The warnings the timers write, from spdlog's default logger.
class timer_log {
 public:
  timer_log() : sink_(std::make_shared<spdlog::sinks::ostream_sink_mt>(text_)) {
    previous_ = spdlog::default_logger();
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("timers", sink_));
  }
  ~timer_log() { spdlog::set_default_logger(previous_); }
  std::string text() const { return text_.str(); }

 private:
  std::ostringstream text_;
  std::shared_ptr<spdlog::sinks::ostream_sink_mt> sink_;
  std::shared_ptr<spdlog::logger> previous_;
};

class machine_timers_test : public ::testing::Test {
 protected:
  machine_timers_test() { cfg.lease.renew_interval = 200ms; }

  // Runs every completion that is ready, with a bound on the time it may take.
  void run_ready() {
    io.restart();
    io.run_for(200ms);
  }

  std::vector<timer_id> fired() const {
    std::vector<timer_id> ids;
    for (const auto& e : posted) ids.push_back(std::get<events::timer>(e).id);
    return ids;
  }

  boost::asio::io_context io;
  config cfg;
  metrics stats{"jobs", "node-a"};
  std::vector<event> posted;
  machine_timers timers{io, cfg, stats, [this](event e) { posted.push_back(std::move(e)); }};
};

TEST_F(machine_timers_test, a_due_timer_is_posted_as_its_event) {
  timers.arm(timer_id::deadline, mono_clock::now());
  run_ready();
  EXPECT_EQ(fired(), std::vector<timer_id>{timer_id::deadline});
}

TEST_F(machine_timers_test, a_cancelled_or_rearmed_timer_does_not_fire_for_its_old_arm) {
  timers.arm(timer_id::wake, mono_clock::now());
  timers.cancel(timer_id::wake);
  timers.arm(timer_id::kill, mono_clock::now());
  timers.arm(timer_id::kill, mono_clock::now());
  run_ready();
  EXPECT_EQ(fired(), std::vector<timer_id>{timer_id::kill});
}

TEST_F(machine_timers_test, none_fires_after_cancel_all) {
  for (auto id : {timer_id::wake, timer_id::deadline, timer_id::kill, timer_id::gate}) {
    timers.arm(id, mono_clock::now());
  }
  timers.cancel_all();
  run_ready();
  EXPECT_TRUE(posted.empty());
}

TEST_F(machine_timers_test, says_whether_one_is_due_within_a_window) {
  EXPECT_FALSE(timers.due_within(10s));
  timers.arm(timer_id::wake, mono_clock::now() + 5s);
  EXPECT_TRUE(timers.due_within(10s));
  EXPECT_FALSE(timers.due_within(1s));
}

TEST_F(machine_timers_test, a_timer_far_past_its_due_time_is_said_as_a_stall_but_not_the_gates) {
  timer_log log;
  timers.arm(timer_id::wake, mono_clock::now() - 1s);
  timers.arm(timer_id::gate, mono_clock::now() - 1s);
  run_ready();
  EXPECT_EQ(posted.size(), 2u);
  const auto text = log.text();
  EXPECT_NE(text.find("the wake timer fired"), std::string::npos) << text;
  EXPECT_EQ(text.find("the gate timer fired"), std::string::npos) << text;
}

}  // namespace
}  // namespace baton
