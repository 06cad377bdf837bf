// The campaign's checker (see history_check.hpp). The overlap test is the
// fault suite's own (find_overlaps of support/event_log.hpp), fed with one
// interval per app from its start to its last landed write.
#include "campaign/history_check.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <set>

#include "support/event_log.hpp"

namespace baton::campaign {

namespace {

// Details are kept for the first few breaches of each sort; all are counted.
constexpr std::size_t details_per_sort = 5;

double ms(std::int64_t ns) {
  return static_cast<double>(ns) / 1e6;
}

// The validity `a` knew at `ns`: the latest one it had learnt by then (0: none).
std::int64_t known_validity(const app_run& a, std::int64_t ns) {
  std::int64_t known = 0;
  for (const auto& l : a.leases) {
    if (l.at_ns <= ns) known = std::max(known, l.valid_until_ns);
  }
  return known;
}

// When the app's own host was paused past the validity it knew: from then
// on what it does is the fence's case (the thawed app may run before its
// keeper can stop it; a write it had in flight lands late). INT64_MAX when
// no such pause came.
std::int64_t paused_out_at(const history& h, const app_run& a) {
  std::int64_t cutoff = INT64_MAX;
  for (const auto& p : h.pauses) {
    if (p.node != a.node || p.from_ns < a.start_ns) continue;
    if (known_validity(a, p.from_ns) + h.drift_ns < p.to_ns) cutoff = std::min(cutoff, p.from_ns);
  }
  return cutoff;
}

// The end of the app's work as the overlap test sees it: its last write
// landed before any pause that put it out (the fence judges the rest).
std::int64_t last_work_ns(const history& h, const app_run& a) {
  const std::int64_t cutoff = paused_out_at(h, a);
  std::int64_t end = std::max(a.start_ns, std::min(a.stop_ns, cutoff));
  for (const auto& w : a.writes) {
    if (w.landed_ns <= cutoff) end = std::max(end, w.landed_ns);
  }
  return end;
}

class breaches {
 public:
  explicit breaches(verdict& v) : v_(v) {}
  void add(const std::string& what, const std::string& detail) {
    if (++seen_[what] <= details_per_sort) v_.violations.push_back({what, detail});
  }

 private:
  verdict& v_;
  std::map<std::string, std::size_t> seen_;
};

// How strongly a fault explains a gap or change: one that forces a change
// first, then one that takes something away for a while (a freeze, a kill, a
// member down), then an instant one (a reload, a resign that did not force).
int blame_rank(const applied_fault& f) {
  if (f.forcing) return 2;
  return f.end_ns > f.begin_ns ? 1 : 0;
}

// The fault a moment is blamed on: of the faults on around it (begun by
// `ns + ahead`, ended no more than one ttl before `ns`: a lease outlives
// its cause by at most that), the latest of the highest blame_rank; nullptr
// if none.
const applied_fault* blamed_fault(const history& h, std::int64_t ns, std::int64_t ahead) {
  const applied_fault* found = nullptr;
  for (const auto& f : h.faults) {
    if (f.skipped || f.begin_ns > ns + ahead) continue;
    if (ns > std::max(f.begin_ns, f.end_ns) + h.ttl_ns) continue;
    if (found == nullptr || blame_rank(f) > blame_rank(*found) ||
        (blame_rank(f) == blame_rank(*found) && f.begin_ns >= found->begin_ns)) {
      found = &f;
    }
  }
  return found;
}

void check_overlaps(const history& h, const std::vector<app_run>& apps, verdict& v, breaches& b) {
  std::vector<testing::interval> intervals;
  for (const auto& a : apps) {
    testing::interval i;
    i.name = a.node;
    i.pid = a.pid;
    i.start_ns = a.start_ns;
    i.end_ns = last_work_ns(h, a);
    i.token = std::to_string(a.token);
    intervals.push_back(i);
  }
  for (const auto& o : testing::find_overlaps(intervals)) {
    ++v.overlaps;
    b.add("overlap", testing::to_string(o));
  }
}

void check_tokens(const std::vector<app_run>& apps, verdict& v, breaches& b) {
  std::map<std::uint64_t, std::string> owner;
  std::uint64_t previous = 0;
  for (const auto& a : apps) {
    if (a.token == 0) {
      ++v.token_regressions;
      b.add("token order", a.node + " pid " + std::to_string(a.pid) + " ran without a token");
      continue;
    }
    const auto [it, fresh] = owner.emplace(a.token, a.node);
    if (!fresh && it->second != a.node) {
      ++v.token_regressions;
      b.add("token order",
            "token " + std::to_string(a.token) + " given to " + it->second + " and to " + a.node);
    }
    if (a.token == previous) continue;  // the same term's app, started again
    if (a.token < previous) {
      ++v.token_regressions;
      b.add("token order", a.node + " pid " + std::to_string(a.pid) + " started with token " +
                               std::to_string(a.token) + " after token " +
                               std::to_string(previous));
    } else if (!fresh) {
      ++v.token_regressions;
      b.add("token order", "token " + std::to_string(a.token) + " came back after token " +
                               std::to_string(previous));
    }
    previous = std::max(previous, a.token);
  }
}

void check_fence_order(const history& h, verdict& v, breaches& b) {
  std::uint64_t highest = 0;
  std::string highest_writer;
  for (std::size_t i = 0; i < h.accepted.size(); ++i) {
    const auto& w = h.accepted[i];
    if (w.token < highest) {
      ++v.stale_accepted;
      b.add("stale write accepted", "write " + std::to_string(i + 1) + " (" + w.writer +
                                        ", token " + std::to_string(w.token) +
                                        ") accepted after token " + std::to_string(highest) +
                                        " had written (" + highest_writer + ")");
    } else if (w.token > highest) {
      highest = w.token;
      highest_writer = w.writer;
    }
  }
  v.writes_accepted = h.accepted.size();
}

void check_leases(const history& h, verdict& v, breaches& b) {
  for (const auto& a : h.apps) {
    v.writes_logged += a.writes.size();
    v.refused += a.refused;
    const std::int64_t cutoff = paused_out_at(h, a);
    for (const auto& w : a.writes) {
      if (w.landed_ns > cutoff) {
        ++v.after_pause;
        continue;
      }
      const std::int64_t known = known_validity(a, w.begun_ns);
      if (known == 0) {
        ++v.past_lease;
        b.add("past lease", a.node + " pid " + std::to_string(a.pid) +
                                " began a write before it knew any lease validity");
        continue;
      }
      if (w.begun_ns <= known) continue;
      const std::int64_t late = w.begun_ns - known;
      if (late <= h.drift_ns) {
        ++v.late_within_drift;
      } else {
        ++v.past_lease;
        char text[200];
        std::snprintf(text, sizeof text,
                      "began a write %.1f ms after its validity ran out (drift margin %.1f ms)",
                      ms(late), ms(h.drift_ns));
        b.add("past lease", a.node + " pid " + std::to_string(a.pid) + " token " +
                                std::to_string(a.token) + " " + text);
      }
    }
  }
}

void tally_faults(const history& h, verdict& v) {
  for (const auto& f : h.faults) {
    auto& c = v.per_class[f.cls];
    if (f.skipped) {
      ++c.skipped;
    } else {
      ++c.injected;
    }
  }
}

void tally_changes_and_gaps(const history& h, const std::vector<app_run>& apps, verdict& v) {
  // Both are blamed on the fault that ended the work before them: the latest
  // fault begun by shortly after the last work of every app so far.
  // A fault that stops the app lands just after its last write.
  constexpr std::int64_t ahead = 50'000'000;
  std::int64_t covered = 0;  // the last work of every app so far
  std::uint64_t token = 0;
  std::string node;
  for (const auto& a : apps) {
    const applied_fault* f = covered > 0 ? blamed_fault(h, covered, ahead) : nullptr;
    class_figures& c = v.per_class[f ? f->cls : "none"];
    if (a.token != token) {
      ++v.terms;
      // A leader change: a term (a run of apps with one token) on another
      // node than the term before it.
      if (!node.empty() && a.node != node && a.start_ns >= h.begin_ns) {
        ++c.leader_changes;
        if (f == nullptr || !f->forcing) ++c.unforced_changes;
      }
      token = a.token;
      node = a.node;
    }
    // A leaderless gap: no app worked between `covered` and this start.
    if (covered >= h.begin_ns && a.start_ns > covered) {
      const std::int64_t until = std::min(a.start_ns, h.end_ns);
      if (until > covered) {
        const double gap = ms(until - covered);
        ++c.gaps;
        c.leaderless_ms += gap;
        c.longest_gap_ms = std::max(c.longest_gap_ms, gap);
        v.leaderless_ms += gap;
      }
    }
    covered = std::max(covered, last_work_ns(h, a));
  }
  // Figures nobody earned leave no empty "none" row.
  if (auto it = v.per_class.find("none"); it != v.per_class.end()) {
    const auto& c = it->second;
    if (c.injected == 0 && c.skipped == 0 && c.leader_changes == 0 && c.gaps == 0) {
      v.per_class.erase(it);
    }
  }
}

}  // namespace

verdict check_history(const history& h) {
  verdict v;
  breaches b(v);
  std::vector<app_run> apps = h.apps;
  std::stable_sort(apps.begin(), apps.end(),
                   [](const app_run& x, const app_run& y) { return x.start_ns < y.start_ns; });
  check_overlaps(h, apps, v, b);
  check_tokens(apps, v, b);
  check_fence_order(h, v, b);
  check_leases(h, v, b);
  tally_faults(h, v);
  tally_changes_and_gaps(h, apps, v);
  return v;
}

std::string format_verdict(const verdict& v) {
  std::string out;
  char line[400];
  std::snprintf(line, sizeof line,
                "%s: %zu terms, %zu writes accepted by the fence (%zu logged by the apps, %zu "
                "refused); overlaps %zu, token regressions %zu, stale writes accepted %zu, writes "
                "past the lease %zu (late within the drift margin %zu, after a host pause %zu); "
                "leaderless %.0f ms\n",
                v.ok() ? "SAFE" : "UNSAFE", v.terms, v.writes_accepted, v.writes_logged, v.refused,
                v.overlaps, v.token_regressions, v.stale_accepted, v.past_lease,
                v.late_within_drift, v.after_pause, v.leaderless_ms);
  out += line;
  out +=
      "\n| fault class | injected | skipped | leader changes | unforced | gaps | leaderless ms | "
      "longest gap ms |\n|---|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& [name, c] : v.per_class) {
    std::snprintf(line, sizeof line, "| %s | %d | %d | %d | %d | %d | %.0f | %.0f |\n",
                  name.c_str(), c.injected, c.skipped, c.leader_changes, c.unforced_changes, c.gaps,
                  c.leaderless_ms, c.longest_gap_ms);
    out += line;
  }
  for (const auto& x : v.violations) out += "VIOLATION " + x.what + ": " + x.detail + "\n";
  return out;
}

}  // namespace baton::campaign
