// Recording, aggregating and formatting the fault suite's results (see
// fault_summary.hpp). The records file has one tab-separated line per record:
// kind, injected, overlaps, stopped_ms, started_ms ("-" for none).

#include "fault_summary.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

namespace baton::testing {
namespace {

std::vector<fault_record>& process_records() {
  static std::vector<fault_record> records;
  return records;
}

std::string number_or_dash(const std::optional<double>& value) {
  if (!value) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", *value);
  return text;
}

std::optional<double> parse_optional(const std::string& text) {
  if (text == "-" || text.empty()) return std::nullopt;
  try {
    return std::stod(text);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::string min_median_max(std::vector<double> values) {
  if (values.empty()) return "—";
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  const double mid = n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
  char text[96];
  std::snprintf(text, sizeof text, "%.0f / %.0f / %.0f", values.front(), mid, values.back());
  return text;
}

}  // namespace

void record_fault(const fault_record& record) {
  process_records().push_back(record);
  const char* path = std::getenv("BATON_FAULT_RECORDS");
  if (path == nullptr || *path == '\0') return;
  std::string line = record.kind + '\t' + std::to_string(record.injected) + '\t' +
                     std::to_string(record.overlaps) + '\t' + number_or_dash(record.stopped_ms) +
                     '\t' + number_or_dash(record.started_ms) + '\t' +
                     number_or_dash(record.gone_after_end_ms) + '\t' +
                     (record.kept_working ? "kept" : "-") + '\t' +
                     (record.window ? "window" : "-") + '\n';
  const int fd = ::open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;
  (void)!::write(fd, line.data(), line.size());
  ::close(fd);
}

const std::vector<fault_record>& recorded_faults() { return process_records(); }

std::vector<fault_record> read_fault_records(const std::string& path) {
  std::vector<fault_record> records;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> fields;
    std::stringstream split(line);
    std::string field;
    while (std::getline(split, field, '\t')) fields.push_back(field);
    // Seven fields before documented windows were recorded.
    if (fields.size() != 7 && fields.size() != 8) continue;
    fault_record r;
    r.kind = fields[0];
    try {
      r.injected = std::stoi(fields[1]);
      r.overlaps = std::stoul(fields[2]);
    } catch (const std::exception&) {
      continue;
    }
    r.stopped_ms = parse_optional(fields[3]);
    r.started_ms = parse_optional(fields[4]);
    r.gone_after_end_ms = parse_optional(fields[5]);
    r.kept_working = fields[6] == "kept";
    r.window = fields.size() == 8 && fields[7] == "window";
    records.push_back(std::move(r));
  }
  return records;
}

std::string format_fault_summary(const std::vector<fault_record>& records) {
  struct row {
    int injected = 0;
    int rounds = 0;
    std::size_t overlaps = 0;
    std::vector<double> stopped;
    std::vector<double> started;
    std::vector<double> gone;
    bool kept_working = false;
    bool window = false;
  };
  // Rows sorted by kind, so "area: ..." kinds group by area whatever order
  // ctest ran the scenarios in.
  std::vector<std::string> order;
  std::map<std::string, row> rows;
  int injected = 0;
  std::size_t overlaps = 0;
  std::size_t in_windows = 0;
  for (const auto& r : records) {
    if (!rows.contains(r.kind)) order.push_back(r.kind);
    row& x = rows[r.kind];
    x.injected += r.injected;
    ++x.rounds;
    x.overlaps += r.overlaps;
    if (r.stopped_ms) x.stopped.push_back(*r.stopped_ms);
    if (r.started_ms) x.started.push_back(*r.started_ms);
    if (r.gone_after_end_ms) x.gone.push_back(*r.gone_after_end_ms);
    x.kept_working = x.kept_working || r.kept_working;
    x.window = x.window || r.window;
    injected += r.injected;
    (r.window ? in_windows : overlaps) += r.overlaps;
  }
  std::sort(order.begin(), order.end());
  std::ostringstream out;
  out << "baton fault suite: " << injected << " faults injected in " << records.size()
      << " rounds, " << overlaps << " overlaps found"
      << (in_windows > 0 ? " (and " + std::to_string(in_windows) +
                               " measured in windows docs/safety.md names, marked below)"
                         : std::string())
      << "\n\n"
      << "| fault | injected | overlaps | old app's last work after, ms "
         "| new app started after, ms | old app gone after the fault ended, ms |\n"
      << "|---|---|---|---|---|---|\n";
  for (const auto& kind : order) {
    const row& x = rows[kind];
    out << "| " << kind << " | " << x.injected << " | " << x.overlaps
        << (x.window ? " (a documented window)" : "") << " | "
        << (!x.stopped.empty() ? min_median_max(x.stopped)
            : x.kept_working   ? std::string("kept working")
                               : std::string("—"))
        << " | " << (x.started.empty() ? std::string("—") : min_median_max(x.started)) << " | "
        << (x.gone.empty() ? std::string("—") : min_median_max(x.gone)) << " |\n";
  }
  out << "\nTimes are min / median / max over the rounds, on CLOCK_MONOTONIC, from the "
         "injection of the fault to the old leader's app's last unit of work (its last tick or "
         "stop line; \"kept working\" when the leader was meant to survive the fault and did) "
         "and to the first line of the next app; for faults that end (a thaw, a healed link), "
         "from that end until the old app's process was gone.\n";
  return out.str();
}

std::string write_fault_summary(const std::string& text, const std::string& fallback) {
  const char* env = std::getenv("BATON_FAULT_SUMMARY");
  const std::string path = env != nullptr && *env != '\0' ? std::string(env) : fallback;
  if (path.empty()) return {};
  std::ofstream out(path, std::ios::trunc);
  out << text;
  return out ? path : std::string();
}

namespace {

// Prints this process's summary when the whole binary ran in one process
// (not under ctest, which sets BATON_FAULT_RECORDS and reports separately).
class summary_environment : public ::testing::Environment {
 public:
  void TearDown() override {
    const auto& records = recorded_faults();
    if (records.empty()) return;
    const std::string text = format_fault_summary(records);
    std::printf("\n%s", text.c_str());
    const char* aggregated = std::getenv("BATON_FAULT_RECORDS");
    if (aggregated == nullptr || *aggregated == '\0') {
      const std::string path = write_fault_summary(text, "");
      if (!path.empty()) std::printf("summary written to %s\n", path.c_str());
    }
    std::fflush(stdout);
  }
};

// Registered before main() runs (gtest_main), like any global test object.
[[maybe_unused]] ::testing::Environment* const registered =
    ::testing::AddGlobalTestEnvironment(new summary_environment);

}  // namespace

}  // namespace baton::testing
