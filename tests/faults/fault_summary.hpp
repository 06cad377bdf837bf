// The fault suite's summary: every scenario round records what it injected,
// the overlaps the checker found, and how long after the injection the
// leader's app stopped and a new one started. The summary (a Markdown table,
// ready for docs/safety.md) is printed at the end of the run and written to
// $BATON_FAULT_SUMMARY when that is set.
//
// ctest runs every TEST in its own process, so records are also appended to
// the file named by $BATON_FAULT_RECORDS (one line per record, written with
// one write() on O_APPEND); the `fault_summary.report` test, which ctest runs
// after all the others (a fixture cleanup), reads that file back and prints
// the summary of the whole run. When the test binary runs alone, a gtest
// Environment prints the summary of that process at exit.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace baton::testing {

/// One injected fault (or a batch of the same fault, `injected` > 1).
struct fault_record {
  /// Short name of the fault kind; rows of the summary are grouped by it.
  std::string kind;
  /// How many faults this record stands for.
  int injected = 1;
  /// Overlapping work intervals found by the checker in this round.
  std::size_t overlaps = 0;
  /// ms from the injection until the old leader's app did its last work;
  /// nullopt when there was none, or it kept working.
  std::optional<double> stopped_ms;
  /// ms from the injection until a new app started; nullopt when none did.
  std::optional<double> started_ms;
  /// For faults that end (a thaw, a healed link): ms from that end until the
  /// old app was gone; nullopt when not measured.
  std::optional<double> gone_after_end_ms;
  /// The leader and its app were meant to survive the fault, and did.
  bool kept_working = false;
  /// The round measures a window docs/safety.md names (replica_ack off
  /// through a partition): its overlaps are the measurement, not a failure,
  /// and are counted apart.
  bool window = false;
};

/// Keep the record for this process's summary and append it to
/// $BATON_FAULT_RECORDS if set.
void record_fault(const fault_record& record);

/// Records of this process, in order.
const std::vector<fault_record>& recorded_faults();

/// Records read back from a records file (bad lines skipped).
std::vector<fault_record> read_fault_records(const std::string& path);

/// The summary of `records` as Markdown: a headline with the totals, then
/// one row per kind with n, overlaps, and min / median / max of the times.
std::string format_fault_summary(const std::vector<fault_record>& records);

/// Write `text` to $BATON_FAULT_SUMMARY if set, else to `fallback` if not
/// empty. Returns the path written ("" if none).
std::string write_fault_summary(const std::string& text, const std::string& fallback);

}  // namespace baton::testing
