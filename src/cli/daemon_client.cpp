// Lines to JSON objects and failures to phrases, over daemon_connection.
#include "daemon_client.hpp"

#include "baton/duration.hpp"
#include "client_text.hpp"

namespace baton::cli {

daemon_client::daemon_client(std::string path, milliseconds timeout)
    : path_(std::move(path)), timeout_(timeout) {}

std::string daemon_client::connect(time_point deadline) {
  return connection_.connect(path_, deadline);
}

message daemon_client::send(const nlohmann::json& request, std::optional<time_point> deadline) {
  message m;
  io_result sent = connection_.write_line(request.dump(), deadline);
  m.what = sent.what;
  if (sent.what == io_result::kind::timed_out) {
    m.why = "the request could not be sent within " + format_duration(timeout_);
  } else if (sent.what == io_result::kind::closed) {
    m.why = "the daemon closed the connection";
  } else {
    m.why = sent.text;
  }
  return m;
}

message daemon_client::ask(const nlohmann::json& request, std::optional<time_point> deadline) {
  message sent = send(request, deadline);
  if (!sent.ok()) return sent;
  return next(deadline);
}

message daemon_client::next(std::optional<time_point> deadline) {
  message m;
  io_result read = connection_.read_line(deadline);
  m.what = read.what;
  switch (read.what) {
    case io_result::kind::done:
      break;
    case io_result::kind::timed_out:
      m.why = "no reply within " + format_duration(timeout_);
      return m;
    case io_result::kind::closed:
      m.why = "the daemon closed the connection without answering";
      return m;
    case io_result::kind::cancelled:
      return m;
    case io_result::kind::failed:
      m.why = read.text;
      return m;
  }
  m.line = std::move(read.text);
  try {
    m.object = nlohmann::json::parse(m.line);
  } catch (const nlohmann::json::exception&) {
    // The parser's own text ("[json.exception.parse_error.101] ...") means
    // nothing to an operator; what was sent says more.
    m.what = io_result::kind::failed;
    m.why = "the daemon sent a line that is not JSON: \"" + printable(m.line.substr(0, 80)) +
            (m.line.size() > 80 ? "...\"" : "\"");
    return m;
  }
  if (!m.object.is_object()) {
    m.what = io_result::kind::failed;
    m.why = "the reply is not a JSON object";
  }
  return m;
}

std::string daemon_client::unreachable(const std::string& why) const {
  return "baton: cannot reach the daemon at " + path_ + ": " + why;
}

std::string daemon_client::unreachable(const message& m) const { return unreachable(m.why); }

}  // namespace baton::cli
