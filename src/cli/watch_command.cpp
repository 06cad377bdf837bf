// `baton watch`: subscribe, ask for the status in the same breath (so the
// first line shows where things stand and no event falls between the two),
// then print every message as it arrives. Runs until the daemon closes the
// connection or a SIGINT/SIGTERM, which a signal_set turns into a cancel of
// the pending read rather than a kill halfway through a line.
#include <signal.h>

#include <boost/asio/signal_set.hpp>

#include "client_text.hpp"
#include "client_verbs.hpp"
#include "daemon_client.hpp"

namespace baton::cli {

int run_watch(const client_settings& settings, std::ostream& out, std::ostream& err) {
  daemon_client client(settings.socket_path, settings.timeout);
  bool signalled = false;
  boost::asio::signal_set signals(client.connection().io(), SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code& ec, int) {
    if (ec) return;
    signalled = true;
    client.connection().cancel();
  });

  // Until both replies are in, the daemon owes an answer within the timeout;
  // after that, silence only means nothing happens.
  const time_point deadline = mono_clock::now() + settings.timeout;
  if (auto why = client.connect(deadline); !why.empty()) {
    if (signalled) return exit_ok;
    err << client.unreachable(why) << '\n';
    return exit_failure;
  }
  for (const char* command : {"subscribe", "status"}) {
    message sent = client.send({{"cmd", command}}, deadline);
    if (signalled) return exit_ok;
    if (!sent.ok()) {
      err << client.unreachable(sent) << '\n';
      return exit_failure;
    }
  }

  bool subscribed = false;
  bool have_status = false;
  for (;;) {
    const bool settled = subscribed && have_status;
    message m = client.next(settled ? no_deadline : std::optional<time_point>(deadline));
    if (signalled || m.what == io_result::kind::cancelled) return exit_ok;
    if (m.what == io_result::kind::closed) {
      err << "baton: the daemon closed the connection" << std::endl;
      return exit_failure;
    }
    if (!m.ok()) {
      err << client.unreachable(m) << '\n';
      return exit_failure;
    }
    const auto type = string_field(m.object, "type");
    if (type == "subscribed") {
      subscribed = true;
      continue;
    }
    if (type == "status") {
      have_status = true;
    } else if (type == "error" && !settled) {
      err << "baton: the daemon answered: " << daemon_error_text(m.object) << '\n';
      return exit_failure;
    }
    if (settings.json) {
      out << m.line << std::endl;
    } else {
      out << clock_time_now() << ' ' << event_text(m.object) << std::endl;
    }
    // Nobody reads any more (`baton watch | head`, with SIGPIPE ignored).
    if (!out) return exit_failure;
  }
}

}  // namespace baton::cli
