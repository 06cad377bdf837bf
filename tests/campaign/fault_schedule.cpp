// The fault schedule (see fault_schedule.hpp). Its random numbers come from
// splitmix64 and plain modulo draws, never from <random>'s distributions,
// whose output the standard leaves to each library: a seed must give the
// same schedule on every machine.
#include "campaign/fault_schedule.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <utility>

namespace baton::campaign {

namespace {

struct class_name {
  fault_class value;
  const char* name;
};

constexpr std::array<class_name, 18> class_names{{
    {fault_class::daemon_kill, "daemon-kill"},
    {fault_class::daemon_freeze, "daemon-freeze"},
    {fault_class::host_freeze, "host-freeze"},
    {fault_class::host_kill, "host-kill"},
    {fault_class::sighup, "sighup"},
    {fault_class::switchover, "switchover"},
    {fault_class::resign, "resign"},
    {fault_class::leave, "leave"},
    {fault_class::join, "join"},
    {fault_class::store_kill, "store-kill"},
    {fault_class::store_restart_empty, "store-restart-empty"},
    {fault_class::store_restore_old, "store-restore-old"},
    {fault_class::store_freeze, "store-freeze"},
    {fault_class::member_kill, "member-kill"},
    {fault_class::member_freeze, "member-freeze"},
    {fault_class::partition, "partition"},
    {fault_class::slow_link, "slow-link"},
    {fault_class::store_clock_jump, "store-clock-jump"},
}};

struct target_name {
  fault_target value;
  const char* name;
};

constexpr std::array<target_name, 5> target_names{{
    {fault_target::leader, "leader"},
    {fault_target::standby, "standby"},
    {fault_target::newcomer, "newcomer"},
    {fault_target::store, "store"},
    {fault_target::member, "member"},
}};

// splitmix64: small, fast, and the same everywhere.
class draws {
 public:
  explicit draws(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  /// Uniform in [low, high] (the modulo's bias is far below anything a
  /// campaign measures).
  std::int64_t between(std::int64_t low, std::int64_t high) {
    if (high <= low) return low;
    return low + static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(high - low + 1));
  }
  std::size_t below(std::size_t n) { return static_cast<std::size_t>(next() % n); }

 private:
  std::uint64_t state_;
};

// FNV-1a of the kind, so that seed 1 of redis and seed 1 of etcd differ.
std::uint64_t kind_hash(std::string_view kind) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (const char c : kind) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

bool is_daemon_class(fault_class c) {
  return c <= fault_class::join;
}

// A candidate's own link to the store: aimed like the daemon faults.
bool is_link_class(fault_class c) {
  return c == fault_class::partition || c == fault_class::slow_link;
}

fault_target target_of(fault_class c, draws& d) {
  switch (c) {
    case fault_class::switchover:
    case fault_class::resign:
      return fault_target::leader;
    case fault_class::join:
      return fault_target::newcomer;
    case fault_class::member_kill:
    case fault_class::member_freeze:
      return fault_target::member;
    default:
      break;
  }
  if (!is_daemon_class(c) && !is_link_class(c)) return fault_target::store;
  // Two thirds on the leader: most of what can go wrong happens there.
  return d.below(3) < 2 ? fault_target::leader : fault_target::standby;
}

std::int64_t hold_of(fault_class c, std::int64_t ttl, draws& d) {
  switch (c) {
    case fault_class::daemon_freeze:
    case fault_class::host_freeze:
    case fault_class::store_freeze:
    case fault_class::member_freeze:
    case fault_class::partition:
    case fault_class::slow_link:
      // Some shorter than the renew deadline, some past the whole lease.
      return d.between(ttl / 5, ttl * 5 / 2);
    case fault_class::daemon_kill:
    case fault_class::host_kill:
    case fault_class::leave:
    case fault_class::store_clock_jump:  // how long the clock stays off
    case fault_class::store_kill:
    case fault_class::store_restart_empty:
    case fault_class::member_kill:
      return d.between(ttl / 2, ttl * 3);
    case fault_class::join:
      return d.between(ttl, ttl * 4);
    case fault_class::sighup:
    case fault_class::switchover:
    case fault_class::resign:
    case fault_class::store_restore_old:
      return 0;
  }
  return 0;
}

std::int64_t parse_int(std::string_view text, std::string_view what, std::size_t line) {
  std::int64_t value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || ptr != text.data() + text.size() || value < 0) {
    throw std::invalid_argument("schedule line " + std::to_string(line) + ": " + std::string(what) +
                                " '" + std::string(text) + "' is not a non-negative integer");
  }
  return value;
}

// A clock jump's step from the fault's one drawn number: from a fifth of
// the ttl (within what is left of any lease) to three ttls (past a whole
// lease), back first one time in four.
std::uint32_t clock_jump_pick_of(std::uint64_t drawn, std::int64_t ttl) {
  const std::int64_t low = std::max<std::int64_t>(1, ttl / 5);
  const std::int64_t span = std::max<std::int64_t>(1, ttl * 3 - low + 1);
  const std::int64_t step = low + static_cast<std::int64_t>(drawn % static_cast<std::uint64_t>(span));
  const bool back_first = (drawn >> 40) % 4 == 0;
  return clock_jump_pick(back_first ? -step : step);
}

}  // namespace

std::int64_t clock_step_ms(const fault& f) {
  const auto length = static_cast<std::int64_t>(f.pick / 2);
  return f.pick % 2 == 1 ? -length : length;
}

std::uint32_t clock_jump_pick(std::int64_t step_ms) {
  // A step beyond what the pick holds (over 24 days) is cut to the largest.
  constexpr std::int64_t most = std::numeric_limits<std::uint32_t>::max() / 2;
  const std::int64_t length = std::min(step_ms < 0 ? -step_ms : step_ms, most);
  return static_cast<std::uint32_t>(2 * length + (step_ms < 0 ? 1 : 0));
}

bool clock_jump_may_end_a_lease(const fault& f, std::int64_t ttl_ms) {
  // Either way one step is forward by the length: the first, or the return.
  const std::int64_t step = clock_step_ms(f);
  return (step < 0 ? -step : step) >= ttl_ms * 2 / 3;
}

const std::vector<std::string>& campaign_kinds() {
  static const std::vector<std::string> kinds{"redis",    "sentinel",  "cluster", "redlock",
                                              "postgres", "zookeeper", "etcd"};
  return kinds;
}

std::vector<fault_class> classes_of(std::string_view kind, int members) {
  std::vector<fault_class> out{
      fault_class::daemon_kill, fault_class::daemon_freeze, fault_class::host_freeze,
      fault_class::host_kill,   fault_class::sighup,        fault_class::switchover,
      fault_class::resign,      fault_class::leave,         fault_class::join};
  using enum fault_class;
  std::vector<fault_class> store;
  if (members != 1) {
    // An ensemble: its leader killed or frozen (`store`), or a follower.
    // No link faults: the link classes need one address to relay.
    if ((kind != "zookeeper" && kind != "etcd") || (members != 3 && members != 5)) return {};
    store = {store_kill, store_freeze, member_kill, member_freeze};
  } else if (kind == "redis" || kind == "zookeeper") {
    store = {store_kill, store_restart_empty, store_freeze, partition, slow_link};
  } else if (kind == "sentinel" || kind == "cluster") {
    // The master is killed (a failover follows) or frozen; a replica or
    // sentinel (a replica or another master for cluster) is the member.
    // No link faults: a candidate learns other addresses from the store
    // (sentinels, MOVED), which a proxy in between cannot follow.
    store = {store_kill, store_freeze, member_kill, member_freeze};
  } else if (kind == "redlock") {
    // Each master is a member; a killed one comes back empty (no persistence).
    store = {member_kill, member_freeze};
  } else if (kind == "postgres") {
    // The only kind whose leases are judged on the store host's wall clock
    // that libfaketime can reach (docs/campaign.md: clock jumps).
    store = {store_kill, store_restore_old, store_freeze, partition, slow_link, store_clock_jump};
  } else if (kind == "etcd") {
    store = {store_kill, store_restore_old, store_freeze, partition, slow_link};
  } else {
    return {};
  }
  out.insert(out.end(), store.begin(), store.end());
  return out;
}

std::vector<fault> make_schedule(const schedule_params& p) {
  const auto classes = classes_of(p.kind, p.members);
  if (classes_of(p.kind).empty())
    throw std::invalid_argument("unknown store kind '" + p.kind + "'");
  if (classes.empty()) {
    throw std::invalid_argument("a " + p.kind + " store cannot have " + std::to_string(p.members) +
                                " members (1; 3 or 5 for zookeeper and etcd)");
  }
  if (p.duration_ms <= 0) throw std::invalid_argument("the duration must be positive");
  if (p.ttl_ms <= 0) throw std::invalid_argument("the ttl must be positive");
  if (p.candidates < 2) throw std::invalid_argument("a campaign needs at least 2 candidates");
  draws d(p.seed ^ kind_hash(p.kind));
  std::vector<fault> out;
  const std::int64_t ttl = p.ttl_ms;
  // Bounded: every step moves time on by at least ttl / 2 > 0 ms.
  for (std::int64_t at = d.between(ttl / 2, ttl * 3 / 2); at < p.duration_ms;
       at += d.between(std::max<std::int64_t>(1, ttl / 2), ttl * 5 / 2)) {
    fault f;
    f.at_ms = at;
    f.what = classes[d.below(classes.size())];
    f.target = target_of(f.what, d);
    f.hold_ms = hold_of(f.what, ttl, d);
    const std::uint64_t drawn = d.next();
    f.pick = f.what == fault_class::store_clock_jump ? clock_jump_pick_of(drawn, ttl)
                                                      : static_cast<std::uint32_t>(drawn >> 32);
    out.push_back(f);
  }
  return out;
}

std::string to_string(fault_class c) {
  for (const auto& n : class_names) {
    if (n.value == c) return n.name;
  }
  return "?";
}

std::string to_string(fault_target t) {
  for (const auto& n : target_names) {
    if (n.value == t) return n.name;
  }
  return "?";
}

std::optional<fault_class> parse_fault_class(std::string_view name) {
  for (const auto& n : class_names) {
    if (name == n.name) return n.value;
  }
  return std::nullopt;
}

std::optional<fault_target> parse_fault_target(std::string_view name) {
  for (const auto& n : target_names) {
    if (name == n.name) return n.value;
  }
  return std::nullopt;
}

std::string to_line(const fault& f) {
  return std::to_string(f.at_ms) + ' ' + to_string(f.what) + ' ' + to_string(f.target) + ' ' +
         std::to_string(f.hold_ms) + ' ' + std::to_string(f.pick);
}

std::string to_text(const schedule_params& p, const std::vector<fault>& faults) {
  std::string out = "# kind=" + p.kind + " seed=" + std::to_string(p.seed) +
                    " duration_ms=" + std::to_string(p.duration_ms) +
                    " ttl_ms=" + std::to_string(p.ttl_ms) +
                    " candidates=" + std::to_string(p.candidates) +
                    " members=" + std::to_string(p.members) + "\n";
  out += "# at_ms class target hold_ms pick\n";
  for (const auto& f : faults) out += to_line(f) + "\n";
  return out;
}

std::vector<fault> parse_schedule(std::string_view text, schedule_params* params) {
  std::vector<fault> out;
  std::istringstream in{std::string(text)};
  std::string line;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    std::istringstream words(line);
    std::vector<std::string> w;
    for (std::string word; words >> word;) w.push_back(word);
    if (w.empty()) continue;
    if (w[0].starts_with("#")) {
      if (params == nullptr) continue;
      for (const auto& word : w) {
        const auto eq = word.find('=');
        if (eq == std::string::npos) continue;
        const std::string key = word.substr(0, eq);
        const std::string value = word.substr(eq + 1);
        if (key == "kind") params->kind = value;
        if (key == "seed") params->seed = static_cast<std::uint64_t>(parse_int(value, key, number));
        if (key == "duration_ms") params->duration_ms = parse_int(value, key, number);
        if (key == "ttl_ms") params->ttl_ms = parse_int(value, key, number);
        if (key == "candidates")
          params->candidates = static_cast<int>(parse_int(value, key, number));
        if (key == "members") params->members = static_cast<int>(parse_int(value, key, number));
      }
      continue;
    }
    if (w.size() != 5) {
      throw std::invalid_argument("schedule line " + std::to_string(number) +
                                  ": want '<at_ms> <class> <target> <hold_ms> <pick>', got '" +
                                  line + "'");
    }
    fault f;
    f.at_ms = parse_int(w[0], "at_ms", number);
    const auto c = parse_fault_class(w[1]);
    if (!c) {
      throw std::invalid_argument("schedule line " + std::to_string(number) +
                                  ": unknown fault class '" + w[1] + "'");
    }
    f.what = *c;
    const auto t = parse_fault_target(w[2]);
    if (!t) {
      throw std::invalid_argument("schedule line " + std::to_string(number) + ": unknown target '" +
                                  w[2] + "'");
    }
    f.target = *t;
    f.hold_ms = parse_int(w[3], "hold_ms", number);
    f.pick = static_cast<std::uint32_t>(parse_int(w[4], "pick", number));
    out.push_back(f);
  }
  return out;
}

}  // namespace baton::campaign
