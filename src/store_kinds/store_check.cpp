// `baton check-store`: the kind in use runs its checks (store_kind.hpp), and
// the command prints them with a verdict.
#include <boost/asio/io_context.hpp>
#include <optional>

#include "baton/store_check.hpp"
#include "baton/store_registry.hpp"

namespace baton {

void async_check_store(boost::asio::io_context& io, const config& cfg,
                       std::function<void(check_report)> done) {
  store_kind_of(cfg).check(io, cfg, std::move(done));
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
