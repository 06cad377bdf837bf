// SIGHUP: read the configuration again and apply what may change while baton
// runs (hooks, the log level, stop_timeout and resign_cooldown), or refuse it
// all. What a reload means is one pure function (judge_reload), whose log
// lines are tested word for word; the handler only waits for the signal,
// logs those lines and hands an accepted configuration to the driver.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "baton/config.hpp"

namespace baton {

/// How loud a line of a reload is.
enum class reload_level { info, warn, error };

struct reload_line {
  reload_level level = reload_level::info;
  std::string text;
};

/// What a SIGHUP leads to.
struct reload_verdict {
  /// The configuration to run with from now on; nullopt = nothing changes.
  std::optional<config> next;
  /// What to log, in order.
  std::vector<reload_line> lines;
};

/// Judges a SIGHUP against the running configuration `running`. `read`
/// reads the configuration again (throws on an invalid one); empty = the
/// daemon has no configuration source.
reload_verdict judge_reload(const config& running, const std::function<config()>& read);

class hangup_reload {
 public:
  /// `current` is the running configuration; `apply` makes an accepted one
  /// the running one (hooks, log level, stop timing).
  hangup_reload(boost::asio::io_context& io, std::function<config()> read,
                std::function<const config&()> current, std::function<void(const config&)> apply);

  /// Waits for SIGHUP from now on, each one judged and carried out.
  void listen();
  /// The daemon exits: no more waiting.
  void cancel() { hangups_.cancel(); }

 private:
  void reload();

  boost::asio::signal_set hangups_;
  std::function<config()> read_;
  std::function<const config&()> current_;
  std::function<void(const config&)> apply_;
};

}  // namespace baton
