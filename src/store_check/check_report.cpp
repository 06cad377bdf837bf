// The report's verdict and the command that prints it.
#include <boost/asio/io_context.hpp>
#include <optional>

#include "baton/store_check.hpp"

namespace baton {

const char* to_string(check_verdict v) {
  switch (v) {
    case check_verdict::ok: return "ok";
    case check_verdict::note: return "note";
    case check_verdict::hazard: return "hazard";
    case check_verdict::failure: return "FAIL";
  }
  return "?";
}

int check_report::exit_code() const {
  int code = 0;
  for (const auto& line : lines) {
    if (line.verdict == check_verdict::failure) return 2;
    if (line.verdict == check_verdict::hazard) code = 1;
  }
  return code;
}

int check_store(const config& cfg, std::ostream& out) {
  boost::asio::io_context io;
  std::optional<check_report> report;
  async_check_store(io, cfg, [&report](check_report r) { report = std::move(r); });
  // Every step is bounded by the connect and command timeouts, so the loop
  // ends with the report; run() returns when nothing is left to do.
  io.run();
  if (!report) {
    out << "check-store: no answer\n";
    return 2;
  }
  out << "check-store: election " << cfg.election << ", store.kind " << cfg.store.kind << "\n";
  std::size_t width = 0;
  for (const auto& line : report->lines) width = std::max(width, line.topic.size());
  int hazards = 0;
  int failures = 0;
  for (const auto& line : report->lines) {
    std::string verdict = to_string(line.verdict);
    verdict.resize(7, ' ');
    std::string topic = line.topic;
    topic.resize(width, ' ');
    out << "  " << verdict << topic << "  " << line.text << "\n";
    if (line.verdict == check_verdict::hazard) ++hazards;
    if (line.verdict == check_verdict::failure) ++failures;
  }
  const int code = report->exit_code();
  if (code == 2) {
    out << "verdict: baton cannot work with this store as it is (" << failures
        << (failures == 1 ? " failure" : " failures") << "; exit 2)\n";
  } else if (code == 1) {
    out << "verdict: baton works here, but " << hazards << (hazards == 1 ? " hazard" : " hazards")
        << " can cost the election (exit 1)\n";
  } else {
    out << "verdict: ready (exit 0)\n";
  }
  return code;
}

}  // namespace baton
