// baton_campaign: the randomized fault campaign's command line (see
// docs/campaign.md).
//
//   baton_campaign --kind redis --seed 42 --duration 60s [--ttl 1500ms]
//                  [--candidates 3] [--members 1|3|5] [--fence redis|postgres]
//                  [--verbose]
//                  [--print-schedule] [--replay [FILE]] [--shrink [--max-tries 24]]
//                  [--keep DIR] [--save-schedule FILE] [--no-fence]
//
// --no-fence is the control: the apps write without the fence, and a
// schedule with a long whole-host pause must then fail.
//
// Exit codes: 0 the history was safe; 1 a safety breach (the schedule is
// printed, and shrunk with --shrink); 2 bad arguments; 3 the run could not
// be carried out (a server did not start, no first leader).
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "campaign/campaign_run.hpp"
#include "campaign/orphan_guard.hpp"
#include "campaign/shrink.hpp"

namespace {

using namespace baton::campaign;

constexpr int exit_unsafe = 1;
constexpr int exit_usage = 2;
constexpr int exit_harness = 3;

struct cli {
  run_options run;
  bool print_schedule = false;
  bool replay = false;
  std::string replay_file;
  bool shrink = false;
  int max_tries = 24;
  std::string save_schedule;
};

[[noreturn]] void usage(const std::string& message) {
  std::fprintf(stderr,
               "baton_campaign: %s\n"
               "usage: baton_campaign --kind KIND --seed N --duration 60s [--ttl 1500ms]\n"
               "         [--candidates 3] [--members 1|3|5] [--fence redis|postgres] [--verbose]\n"
               "         [--print-schedule] [--replay [FILE]] [--shrink [--max-tries 24]]\n"
               "         [--keep DIR] [--save-schedule FILE] [--no-fence]\n"
               "kinds: redis sentinel cluster redlock postgres zookeeper etcd\n",
               message.c_str());
  std::exit(exit_usage);
}

std::int64_t parse_number(std::string_view flag, std::string_view text) {
  std::int64_t v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || ptr != text.data() + text.size() || v < 0) {
    usage(std::string(flag) + " wants a non-negative integer, got '" + std::string(text) + "'");
  }
  return v;
}

// "90s", "1500ms", "2m", or a bare number of seconds.
std::int64_t parse_duration_ms(std::string_view flag, std::string_view text) {
  const std::string_view original = text;
  std::int64_t scale = 1000;
  if (text.ends_with("ms")) {
    scale = 1;
    text.remove_suffix(2);
  } else if (text.ends_with("s")) {
    text.remove_suffix(1);
  } else if (text.ends_with("m")) {
    scale = 60'000;
    text.remove_suffix(1);
  }
  std::int64_t v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || ptr != text.data() + text.size() || v <= 0 ||
      v > 24 * 3600'000 / scale) {
    usage(std::string(flag) + " wants a positive duration such as 90s, 1500ms or 2m, got '" +
          std::string(original) + "'");
  }
  return v * scale;
}

cli parse(int argc, char** argv) {
  cli c;
  c.run.params.kind.clear();
  bool have_seed = false;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const auto value = [&]() -> std::string_view {
      if (i + 1 >= argc) usage(std::string(arg) + " needs a value");
      return argv[++i];
    };
    if (arg == "--kind") {
      c.run.params.kind = value();
    } else if (arg == "--seed") {
      c.run.params.seed = static_cast<std::uint64_t>(parse_number(arg, value()));
      have_seed = true;
    } else if (arg == "--duration") {
      c.run.params.duration_ms = parse_duration_ms(arg, value());
    } else if (arg == "--ttl") {
      c.run.params.ttl_ms = parse_duration_ms(arg, value());
      if (c.run.params.ttl_ms < 100) usage("--ttl must be at least 100ms, as baton's is");
    } else if (arg == "--candidates") {
      c.run.params.candidates = static_cast<int>(parse_number(arg, value()));
      if (c.run.params.candidates < 2 || c.run.params.candidates > 9) {
        usage("--candidates wants 2 to 9");
      }
    } else if (arg == "--members") {
      c.run.params.members = static_cast<int>(parse_number(arg, value()));
    } else if (arg == "--fence") {
      c.run.fence = value();
      if (c.run.fence != "redis" && c.run.fence != "postgres") {
        usage("--fence is redis or postgres, not '" + c.run.fence + "'");
      }
    } else if (arg == "--no-fence") {
      c.run.unfenced = true;
    } else if (arg == "--verbose") {
      c.run.verbose = true;
    } else if (arg == "--print-schedule") {
      c.print_schedule = true;
    } else if (arg == "--replay") {
      c.replay = true;
      if (i + 1 < argc && !std::string_view(argv[i + 1]).starts_with("--"))
        c.replay_file = argv[++i];
    } else if (arg == "--shrink") {
      c.shrink = true;
    } else if (arg == "--max-tries") {
      c.max_tries = static_cast<int>(parse_number(arg, value()));
    } else if (arg == "--keep") {
      c.run.keep_dir = std::string(value());
    } else if (arg == "--save-schedule") {
      c.save_schedule = value();
    } else if (arg == "--help" || arg == "-h") {
      usage("a randomized fault campaign against real servers");
    } else {
      usage("unknown argument '" + std::string(arg) + "'");
    }
  }
  if (c.replay_file.empty()) {
    if (c.run.params.kind.empty()) usage("--kind is required");
    if (!have_seed) usage("--seed is required");
  }
  return c;
}

std::int64_t last_fault_end_ms(const std::vector<fault>& faults) {
  std::int64_t end = 0;
  for (const auto& f : faults) end = std::max(end, f.at_ms + f.hold_ms);
  return end;
}

// The terms and the faults on one timeline, seconds from the first app's work.
void print_timeline(const history& h) {
  struct line {
    std::int64_t at;
    std::string text;
  };
  std::vector<line> lines;
  const auto s = [&](std::int64_t ns) { return static_cast<double>(ns - h.begin_ns) / 1e9; };
  for (const auto& a : h.apps) {
    std::int64_t last = a.start_ns;
    for (const auto& w : a.writes) last = std::max(last, w.landed_ns);
    char text[200];
    std::snprintf(text, sizeof text,
                  "  %+8.3f s  app %s token %llu pid %d: %zu writes, last at %+.3f s",
                  s(a.start_ns), a.node.c_str(), static_cast<unsigned long long>(a.token), a.pid,
                  a.writes.size(), s(last));
    lines.push_back({a.start_ns, text});
  }
  for (const auto& f : h.faults) {
    char text[300];
    std::snprintf(text, sizeof text, "  %+8.3f s  fault %s %s, until %+.3f s%s", s(f.begin_ns),
                  f.cls.c_str(), f.skipped ? "skipped" : f.target.c_str(), s(f.end_ns),
                  f.forcing ? " [forcing]" : "");
    lines.push_back({f.begin_ns, text});
  }
  std::stable_sort(lines.begin(), lines.end(),
                   [](const line& x, const line& y) { return x.at < y.at; });
  std::printf("timeline:\n");
  for (const auto& l : lines) std::printf("%s\n", l.text.c_str());
}

void print_outcome(const run_options& o, const run_outcome& r) {
  std::printf("campaign %s seed %llu: %.0f s, ttl %lld ms, %d candidates\n", o.params.kind.c_str(),
              static_cast<unsigned long long>(o.params.seed),
              static_cast<double>(o.params.duration_ms) / 1000.0,
              static_cast<long long>(o.params.ttl_ms), o.params.candidates);
  if (!r.harness_error.empty()) {
    std::printf("HARNESS ERROR: %s\n", r.harness_error.c_str());
    return;
  }
  if (o.verbose || !r.judged.ok()) print_timeline(r.recorded);
  std::printf("%s", format_verdict(r.judged).c_str());
  if (!r.recovered) {
    std::printf("LIVENESS: no single app worked again within the settle time after the faults\n");
  }
}

}  // namespace

int main(int argc, char** argv) {
  cli c = parse(argc, argv);
  install_orphan_guard();
  std::vector<fault> faults;
  try {
    if (!c.replay_file.empty()) {
      std::ifstream in(c.replay_file);
      if (!in) usage("cannot read the schedule file '" + c.replay_file + "'");
      const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
      faults = parse_schedule(text, &c.run.params);
      if (classes_of(c.run.params.kind).empty()) {
        usage("the schedule file names no known kind (a '# kind=K ...' header line)");
      }
    } else {
      faults = make_schedule(c.run.params);
    }
  } catch (const std::invalid_argument& e) {
    usage(e.what());
  }
  if (c.print_schedule || c.replay) std::printf("%s", to_text(c.run.params, faults).c_str());
  if (!c.save_schedule.empty()) std::ofstream(c.save_schedule) << to_text(c.run.params, faults);
  if (c.print_schedule) return 0;

  const run_outcome r = run_campaign(c.run, faults);
  print_outcome(c.run, r);
  if (!r.harness_error.empty()) {
    std::printf("%s\n", r.diagnostics.c_str());
    return exit_harness;
  }
  if (r.judged.ok()) {
    if (c.run.verbose && !r.recovered) std::printf("%s\n", r.diagnostics.c_str());
    return 0;
  }
  std::printf("\nthe failing schedule (run it again with --replay FILE):\n%s",
              to_text(c.run.params, faults).c_str());
  if (c.run.verbose) std::printf("%s\n", r.diagnostics.c_str());
  if (!c.shrink) return exit_unsafe;

  run_options trial = c.run;
  trial.verbose = false;
  trial.keep_dir.clear();
  int harness_errors = 0;
  const auto fails = [&](const std::vector<fault>& subset) {
    trial.params.duration_ms = last_fault_end_ms(subset) + 2 * c.run.params.ttl_ms;
    const run_outcome t = run_campaign(trial, subset);
    if (!t.harness_error.empty()) ++harness_errors;
    const bool failed = t.harness_error.empty() && !t.judged.ok();
    std::printf("shrink: %zu faults: %s\n", subset.size(), failed ? "fails" : "passes");
    std::fflush(stdout);
    return failed;
  };
  const shrink_result s = shrink_schedule(faults, fails, c.max_tries);
  run_options shrunk = c.run;
  shrunk.params.duration_ms = last_fault_end_ms(s.faults) + 2 * c.run.params.ttl_ms;
  std::printf("\nshrunk in %d tries%s%s to %zu of %zu faults:\n%s", s.tries,
              s.exhausted ? " (the bound on tries ended it)" : "",
              harness_errors > 0 ? " (some tries hit harness errors)" : "", s.faults.size(),
              faults.size(), to_text(shrunk.params, s.faults).c_str());
  return exit_unsafe;
}
