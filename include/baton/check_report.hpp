// What a store's checks found (`baton check-store`, and the hazards `run`
// logs a second after start): one line per topic with a verdict. Each kind
// fills a report from its own folder; the command that runs every kind's
// checks is the registry's (baton/store_check.hpp).
#pragma once

#include <string>
#include <vector>

namespace baton {

enum class check_verdict {
  ok,       ///< as baton needs it
  note,     ///< worth knowing, no risk to the election
  hazard,   ///< works, but can cost a leader or let one be lost early
  failure,  ///< baton cannot work with this store as it is
};

/// "ok", "note", "hazard", "FAIL".
const char* to_string(check_verdict v);

struct check_line {
  check_verdict verdict = check_verdict::ok;
  /// What was checked: "reachable", "tls", "acl", ...; for a Redlock master
  /// prefixed with "master N ".
  std::string topic;
  std::string text;
};

struct check_report {
  std::vector<check_line> lines;
  /// 2 when a line is a failure (cannot connect, refused, bad setup), 1 when
  /// one is a hazard, 0 otherwise.
  int exit_code() const;
};

}  // namespace baton
