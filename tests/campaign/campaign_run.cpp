// One campaign run (see campaign_run.hpp): the candidates, the fault loop,
// and the history read back from the apps' event log and the resource.
#include "campaign/campaign_run.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <thread>

#include "baton/lease_drift.hpp"
#include "campaign/orphan_guard.hpp"
#include "campaign/store_worlds.hpp"
#include "support/baton_process.hpp"
#include "support/built_paths.hpp"
#include "support/event_log.hpp"
#include "support/fault_proxy.hpp"
#include "support/servers/postgres_server.hpp"
#include "support/servers/redis_server.hpp"

namespace baton::campaign {

using namespace std::chrono_literals;
using testing::baton_process;
using testing::event_log;

std::filesystem::path campaign_app_binary();

namespace {

std::int64_t mono_now() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

void sleep_until_mono(std::int64_t ns) {
  const std::int64_t left = ns - mono_now();
  if (left > 0) std::this_thread::sleep_for(std::chrono::nanoseconds(left));
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string fence_file(const std::string& relative) {
  const auto path = std::filesystem::path(testing::source_root_path()) / "fence" / relative;
  const std::string text = read_file(path);
  if (text.empty()) throw std::runtime_error("cannot read " + path.string());
  return text;
}

// The resource the apps write to through a shipped fence. No fault reaches it.
class fence_resource {
 public:
  fence_resource(const std::string& which, const std::string& resource) : resource_(resource) {
    if (which == "postgres") {
      pg_ = std::make_unique<testing::postgres_server>();
      pg_->query("SET client_min_messages TO warning;\n" +
                 fence_file("postgresql/baton_fence.sql"));
      pg_->query(
          "CREATE TABLE fence_history (id bigserial PRIMARY KEY, resource text NOT NULL, "
          "token bigint NOT NULL, seq bigint NOT NULL, writer text NOT NULL)");
    } else if (which == "redis") {
      redis_ = std::make_unique<testing::redis_server>();
    } else {
      throw std::invalid_argument("unknown fence '" + which + "' (redis or postgres)");
    }
  }

  std::vector<std::string> app_args() const {
    if (pg_) return {"--resource", resource_, "--postgres", pg_->conninfo()};
    return {"--resource",
            resource_,
            "--redis",
            "127.0.0.1:" + std::to_string(redis_->port()),
            "--script",
            (std::filesystem::path(testing::source_root_path()) / "fence/redis/baton_fence.lua")
                .string()};
  }

  /// The writes the fence accepted, in the order they landed.
  std::vector<accepted_write> history() const {
    std::vector<accepted_write> out;
    if (pg_) {
      for (const auto& row : pg_->query("SELECT token, writer || ':' || seq FROM fence_history "
                                        "WHERE resource = '" +
                                        resource_ + "' ORDER BY id")) {
        out.push_back({std::stoull(row.at(0)), row.at(1)});
      }
      return out;
    }
    for (const auto& entry :
         redis_->command({"LRANGE", "app:{" + resource_ + "}:history", "0", "-1"})) {
      const auto space = entry.find(' ');
      out.push_back({std::stoull(entry.substr(0, space)), entry.substr(space + 1)});
    }
    return out;
  }

 private:
  std::string resource_;
  std::unique_ptr<testing::postgres_server> pg_;
  std::unique_ptr<testing::redis_server> redis_;
};

// What state a candidate is in, as the runner left it.
enum class node_state { up, down, daemon_frozen, host_frozen };

struct node {
  std::unique_ptr<baton_process> daemon;
  node_state state = node_state::down;
  // For a frozen host: the keeper's group and the app, thawed in order.
  pid_t keeper_group = 0;
  pid_t app = 0;
};

class campaign {
 public:
  campaign(const run_options& o, const std::vector<fault>& faults)
      : o_(o),
        faults_(faults),
        ttl_ms_(o.params.ttl_ms),
        election_("campaign-" + o.params.kind + "-" + std::to_string(o.params.seed)),
        events_(dir_ / "events.log"),
        log_(events_) {}

  ~campaign() { clean_up(); }

  run_outcome run() {
    run_outcome out;
    try {
      world_ = make_store_world(o_.params.kind, o_.params.members);
      world_->seed_election(election_);
      const std::string fence_kind =
          !o_.fence.empty() ? o_.fence : (o_.params.kind == "postgres" ? "postgres" : "redis");
      fence_ = std::make_unique<fence_resource>(fence_kind, election_);
      for (int i = 1; i <= o_.params.candidates; ++i) start(i);
      const auto first = wait_for_working_app(30s + 20 * std::chrono::milliseconds(ttl_ms_));
      if (!first) throw std::runtime_error("no app worked within the first wait");
      t0_ = mono_now();
      applied_fault backup{"store-backup", "store", mono_now(), 0, true, false};
      if (world_->take_backup()) {
        backup.end_ns = mono_now();
        extra_faults_.push_back(backup);
      }
      inject_all();
      end_everything();
      out.recovered =
          wait_for_working_app(
              std::chrono::milliseconds(o_.settle_ms > 0 ? o_.settle_ms : 10 * ttl_ms_ + 10'000))
              .has_value();
      const std::int64_t end = mono_now();
      stop_everything();
      out.recorded = read_history(end);
      out.judged = check_history(out.recorded);
      if (!out.judged.ok() || !out.recovered) out.diagnostics = diagnostics();
    } catch (const std::exception& e) {
      out.harness_error = e.what();
      out.diagnostics = diagnostics();
    }
    keep_files();
    return out;
  }

 private:
  std::filesystem::path socket_of(int i) const {
    return dir_ / ("n" + std::to_string(i) + ".sock");
  }
  static std::string name_of(int i) { return "node-" + std::to_string(i); }

  void start(int i) {
    std::vector<std::string> args = {"run",
                                     "--election",
                                     election_,
                                     "--node-id",
                                     name_of(i),
                                     "--ttl",
                                     std::to_string(ttl_ms_) + "ms",
                                     "--stop-timeout",
                                     "1s",
                                     "--socket",
                                     socket_of(i).string(),
                                     "--log-level",
                                     "debug"};
    // Where the store has one address, each candidate reaches it through
    // a proxy of its own, kept across restarts: the link faults' handle.
    std::vector<std::string> flags = world_->store_flags();
    if (const auto port = world_->store_port()) {
      auto& proxy = proxies_[i];
      if (!proxy) proxy = std::make_unique<testing::fault_proxy>(*port);
      flags = world_->store_flags_via(proxy->port());
    }
    args.insert(args.end(), flags.begin(), flags.end());
    args.insert(args.end(), {"--", campaign_app_binary().string(), "--log", events_.string(),
                             "--name", name_of(i), "--socket", socket_of(i).string()});
    const auto fence_args = fence_->app_args();
    args.insert(args.end(), fence_args.begin(), fence_args.end());
    if (o_.unfenced) args.emplace_back("--unfenced");
    node& n = nodes_[i];
    n.daemon.reset();
    n.daemon = std::make_unique<baton_process>(args, testing::env_list{},
                                               dir_ / ("n" + std::to_string(i) + ".log"));
    guard_group(n.daemon->pgid());
    n.state = node_state::up;
  }

  // SIGKILL the daemon's group and reap it.
  void kill_daemon(int i) {
    if (nodes_[i].daemon) unguard_group(nodes_[i].daemon->pgid());
    nodes_[i].daemon.reset();
    nodes_[i].state = node_state::down;
  }

  // SIGTERM: a clean stop (the app stopped, the lease released), bounded.
  void stop_cleanly(int i) {
    node& n = nodes_[i];
    if (n.daemon) {
      n.daemon->signal(SIGTERM);
      n.daemon->wait_exit(std::chrono::milliseconds(3 * ttl_ms_) + 5s);
    }
    kill_daemon(i);
  }

  // Is `pid` one of this run's apps, still running? Over a long run the
  // system wraps pids (32,768 here), so "a process with that pid" is not
  // enough: an app that ended without a stop line would seem to live on.
  bool app_alive(pid_t pid) const { return testing::is_app_of(pid, events_, "campaign_app"); }

  // The node whose app works now (alive, started, not stopped), if any.
  std::optional<testing::interval> working_app() {
    log_.refresh();
    return log_.current_worker([this](pid_t p) { return app_alive(p); });
  }

  static int index_of(const std::string& name) {
    return name.starts_with("node-") ? std::atoi(name.c_str() + 5) : -1;
  }

  std::optional<testing::interval> wait_for_working_app(std::chrono::milliseconds within) {
    std::optional<testing::interval> found;
    testing::wait_for(
        log_,
        [&](const event_log& l) {
          const auto live = l.live_workers([this](pid_t p) { return app_alive(p); });
          if (live.size() != 1 || live[0].ticks == 0) return false;
          found = live[0];
          return true;
        },
        within);
    return found;
  }

  std::vector<int> nodes_in(node_state state, int except = -1) const {
    std::vector<int> out;
    for (const auto& [i, n] : nodes_) {
      if (n.state == state && i != except) out.push_back(i);
    }
    return out;
  }

  // The daemon-level target of `f`: a node index, or -1 to skip.
  int daemon_target(const fault& f, pid_t* app) {
    const auto working = working_app();
    const int leader = working ? index_of(working->name) : -1;
    if (f.target == fault_target::leader) {
      if (leader < 0 || nodes_[leader].state != node_state::up) return -1;
      if (app != nullptr) *app = working->pid;
      return leader;
    }
    const auto standbys = nodes_in(node_state::up, leader);
    if (standbys.empty()) return -1;
    return standbys[f.pick % standbys.size()];
  }

  // Runs `baton <args>` as an operator would, bounded.
  std::string run_cli(std::vector<std::string> args, const std::string& name) {
    baton_process p(std::move(args), testing::env_list{}, dir_ / (name + ".log"));
    const auto code = p.wait_exit(5s);
    return code ? "exit " + std::to_string(*code) : "still running after 5 s";
  }

  // Begins fault `id`; fills `a` (target, forcing) or marks it skipped.
  void begin(int id, const fault& f, applied_fault& a) {
    a.cls = to_string(f.what);
    // A freeze of a third of the ttl may outlast the renew deadline; a
    // shorter one never should, so a change after it is unforced.
    const bool long_freeze = f.hold_ms >= ttl_ms_ / 3;
    pid_t app = 0;
    switch (f.what) {
      case fault_class::daemon_kill:
      case fault_class::host_kill:
      case fault_class::daemon_freeze:
      case fault_class::host_freeze:
      case fault_class::sighup:
      case fault_class::leave: {
        const int i = daemon_target(f, &app);
        if (i < 0) break;
        const bool on_leader = f.target == fault_target::leader;
        a.target = name_of(i) + (on_leader ? " (leader)" : " (standby)");
        node& n = nodes_[i];
        if (f.what == fault_class::sighup) {
          n.daemon->signal(SIGHUP);
          return;
        }
        if (f.what == fault_class::leave) {
          stop_cleanly(i);
        } else if (f.what == fault_class::daemon_kill) {
          kill_daemon(i);
        } else if (f.what == fault_class::host_kill) {
          const pid_t group = app > 0 ? ::getpgid(app) : 0;
          if (group > 1 && group != ::getpgrp()) ::kill(-group, SIGKILL);
          kill_daemon(i);
        } else if (f.what == fault_class::daemon_freeze) {
          n.daemon->signal_group(SIGSTOP);
          n.state = node_state::daemon_frozen;
        } else {
          const pid_t group = app > 0 ? ::getpgid(app) : 0;
          n.keeper_group = group > 1 && group != ::getpgrp() ? group : 0;
          n.app = app;
          if (n.keeper_group > 0) ::kill(-n.keeper_group, SIGSTOP);
          n.daemon->signal_group(SIGSTOP);
          n.state = node_state::host_frozen;
          pauses_[id] = {name_of(i), mono_now(), 0};
        }
        a.forcing =
            on_leader && (f.what == fault_class::leave || f.what == fault_class::daemon_kill ||
                          f.what == fault_class::host_kill || long_freeze);
        targets_[id] = i;
        return;
      }
      case fault_class::switchover: {
        const int i = daemon_target(f, nullptr);
        if (i < 0) break;
        const auto standbys = nodes_in(node_state::up, i);
        if (standbys.empty()) break;
        const int to = standbys[(f.pick / 7) % standbys.size()];
        a.target = name_of(i) + " -> " + name_of(to) + ": " +
                   run_cli({"switchover", "--socket", socket_of(i).string(), "--to", name_of(to)},
                           "switchover-" + std::to_string(id));
        a.forcing = true;
        return;
      }
      case fault_class::resign: {
        const int i = daemon_target(f, nullptr);
        if (i < 0) break;
        a.target =
            name_of(i) + ": " +
            run_cli({"resign", "--socket", socket_of(i).string()}, "resign-" + std::to_string(id));
        a.forcing = true;
        return;
      }
      case fault_class::partition:
      case fault_class::slow_link: {
        const int i = daemon_target(f, nullptr);
        if (i < 0 || proxies_.count(i) == 0 || !links_cut_.insert(i).second) break;
        const bool on_leader = f.target == fault_target::leader;
        auto& proxy = *proxies_[i];
        if (f.what == fault_class::partition) {
          proxy.blackhole();
          a.target = name_of(i) + (on_leader ? " (leader)" : " (standby)");
          a.forcing = on_leader && long_freeze;
        } else {
          // 5 % to 25 % of the ttl each way: from a slow link to one whose
          // round trip outlasts baton's wait for a reply.
          const std::int64_t each_way =
              std::max<std::int64_t>(1, ttl_ms_ * ((f.pick / 2) % 5 + 1) / 20);
          proxy.delay(std::chrono::milliseconds(each_way));
          a.target = name_of(i) + (on_leader ? " (leader)" : " (standby)") + ", " +
                     std::to_string(each_way) + " ms each way";
          // baton waits a sixth of the ttl for a store reply: a slower
          // round trip fails every renewal.
          a.forcing = on_leader && 2 * each_way >= ttl_ms_ / 6;
        }
        targets_[id] = i;
        return;
      }
      case fault_class::join: {
        const int i = next_newcomer_++;
        start(i);
        a.target = name_of(i);
        targets_[id] = i;
        return;
      }
      default: {
        const auto hit = world_->begin(id, f);
        if (!hit) break;
        a.target = *hit;
        a.forcing = world_->forcing(f, ttl_ms_);
        store_faults_.push_back(id);
        return;
      }
    }
    a.skipped = true;
  }

  void end(int id, const fault& f) {
    if (std::find(store_faults_.begin(), store_faults_.end(), id) != store_faults_.end()) {
      world_->end(id);
      return;
    }
    const auto t = targets_.find(id);
    if (t == targets_.end()) return;
    const int i = t->second;
    targets_.erase(t);
    node& n = nodes_[i];
    switch (f.what) {
      case fault_class::daemon_kill:
      case fault_class::host_kill:
      case fault_class::leave:
        if (n.state == node_state::down && retired_.count(i) == 0) start(i);
        break;
      case fault_class::partition:
      case fault_class::slow_link:
        if (proxies_.count(i) != 0) proxies_[i]->pass();
        links_cut_.erase(i);
        break;
      case fault_class::join:
        // A newcomer another fault froze is thawed first, so that it can
        // stop cleanly; that fault's own end then finds it gone.
        if (n.daemon) n.daemon->signal_group(SIGCONT);
        if (n.keeper_group > 0) ::kill(-n.keeper_group, SIGCONT);
        stop_cleanly(i);
        retired_.insert(i);
        break;
      case fault_class::daemon_freeze:
        if (n.daemon) n.daemon->signal_group(SIGCONT);
        if (n.state == node_state::daemon_frozen) n.state = node_state::up;
        break;
      case fault_class::host_freeze:
        // An odd pick thaws the app first: it runs while its keeper and
        // daemon still sleep, the order only a fence can make safe.
        if (f.pick % 2 == 1 && n.app > 0) {
          const std::int64_t thawed = mono_now();
          ::kill(n.app, SIGCONT);
          // Until it has begun a write after the thaw (landed or refused),
          // so the window is there whatever the machine's load; 200 ms at
          // most.
          const pid_t app = n.app;
          testing::wait_for(
              log_,
              [&](const event_log& l) {
                const auto& events = l.events();
                for (auto it = events.rbegin(); it != events.rend() && it->ns > thawed; ++it) {
                  if (it->pid != app) continue;
                  if (it->word == "refused" || it->word == "failed") return true;
                  // A write begun after the thaw, not one in flight across it.
                  const auto begun = it->details.find("begun_ns=");
                  if (it->word == "tick" && begun != std::string::npos &&
                      std::atoll(it->details.c_str() + begun + 9) > thawed) {
                    return true;
                  }
                }
                return false;
              },
              200ms);
        }
        if (n.daemon) n.daemon->signal_group(SIGCONT);
        if (n.keeper_group > 0) ::kill(-n.keeper_group, SIGCONT);
        n.keeper_group = 0;
        n.app = 0;
        if (n.state == node_state::host_frozen) n.state = node_state::up;
        pauses_[id].to_ns = mono_now();
        break;
      default:
        break;
    }
  }

  void inject_all() {
    std::vector<std::int64_t> ends(faults_.size(), -1);  // CLOCK_MONOTONIC ns, -1: none due
    applied_.assign(faults_.size(), {});
    const std::int64_t stop_at = t0_ + o_.params.duration_ms * 1'000'000;
    std::size_t next = 0;
    // Bounded: every turn begins or ends one fault, or leaves the loop.
    for (std::size_t turns = 0; turns <= 2 * faults_.size() + 1; ++turns) {
      std::int64_t due = stop_at;
      int which = -1;
      bool is_end = false;
      if (next < faults_.size()) {
        const std::int64_t at = t0_ + faults_[next].at_ms * 1'000'000;
        if (at < due) {
          due = at;
          which = static_cast<int>(next);
        }
      }
      for (std::size_t i = 0; i < ends.size(); ++i) {
        if (ends[i] >= 0 && ends[i] < due) {
          due = ends[i];
          which = static_cast<int>(i);
          is_end = true;
        }
      }
      if (which < 0) {  // nothing more before the duration is over
        sleep_until_mono(stop_at);
        break;
      }
      sleep_until_mono(due);
      const auto& f = faults_[static_cast<std::size_t>(which)];
      auto& a = applied_[static_cast<std::size_t>(which)];
      if (is_end) {
        end(which, f);
        a.end_ns = mono_now();
        ends[static_cast<std::size_t>(which)] = -1;
        continue;
      }
      ++next;
      a.begin_ns = mono_now();
      begin(which, f, a);
      a.end_ns = a.begin_ns;
      if (!a.skipped && f.hold_ms > 0)
        ends[static_cast<std::size_t>(which)] = a.begin_ns + f.hold_ms * 1'000'000;
      if (o_.verbose) {
        std::printf("  +%7.3f s %-20s %s%s\n", static_cast<double>(a.begin_ns - t0_) / 1e9,
                    a.cls.c_str(), a.skipped ? "skipped" : a.target.c_str(),
                    a.forcing ? " [forcing]" : "");
        std::fflush(stdout);
      }
    }
    pending_ends_ = ends;
  }

  // Ends the faults still on at the end of the duration, in time order.
  void end_everything() {
    for (;;) {
      int which = -1;
      for (std::size_t i = 0; i < pending_ends_.size(); ++i) {
        if (pending_ends_[i] >= 0 &&
            (which < 0 || pending_ends_[i] < pending_ends_[static_cast<std::size_t>(which)])) {
          which = static_cast<int>(i);
        }
      }
      if (which < 0) break;
      end(which, faults_[static_cast<std::size_t>(which)]);
      applied_[static_cast<std::size_t>(which)].end_ns = mono_now();
      pending_ends_[static_cast<std::size_t>(which)] = -1;
    }
    if (world_) world_->end_all();
  }

  void stop_everything() {
    for (auto& [i, n] : nodes_) {
      if (n.daemon) n.daemon->signal_group(SIGCONT);
      if (n.keeper_group > 0) ::kill(-n.keeper_group, SIGCONT);
      if (n.daemon) unguard_group(n.daemon->pgid());
      n.daemon.reset();
      n.state = node_state::down;
    }
    kill_leftover_apps();
  }

  // An app whose keeper was killed or frozen may outlive it: SIGKILL those
  // (only live campaign_app processes writing this run's log, from /proc).
  void kill_leftover_apps() {
    const event_log log = event_log::read(events_);
    for (const auto& w : log.open_intervals()) {
      const std::string cmdline = read_file("/proc/" + std::to_string(w.pid) + "/cmdline");
      const auto program =
          std::filesystem::path(cmdline.substr(0, cmdline.find('\0'))).filename().string();
      if (program == "campaign_app" && cmdline.find(events_.string()) != std::string::npos) {
        ::kill(w.pid, SIGCONT);
        ::kill(w.pid, SIGKILL);
      }
    }
  }

  void clean_up() {
    try {
      end_everything();
    } catch (const std::exception&) {
    }
    stop_everything();
  }

  history read_history(std::int64_t end) {
    history h;
    h.begin_ns = t0_;
    h.end_ns = end;
    h.ttl_ns = ttl_ms_ * 1'000'000;
    h.drift_ns = lease_drift(milliseconds(ttl_ms_), default_drift_factor).count() * 1'000'000;
    const event_log log = event_log::read(events_);
    std::map<pid_t, std::size_t> current;  // pid -> its latest app in h.apps
    for (const auto& e : log.events()) {
      if (e.word == "start") {
        app_run a;
        a.node = e.name;
        a.pid = e.pid;
        a.start_ns = e.ns;
        current[e.pid] = h.apps.size();
        h.apps.push_back(a);
        continue;
      }
      const auto it = current.find(e.pid);
      if (it == current.end()) continue;
      app_run& a = h.apps[it->second];
      const auto value = [&](const std::string& key) -> std::int64_t {
        const auto at = e.details.find(key + "=");
        if (at == std::string::npos) return 0;
        std::int64_t v = 0;
        const char* begin = e.details.data() + at + key.size() + 1;
        std::from_chars(begin, e.details.data() + e.details.size(), v);
        return v;
      };
      if (e.word == "env") {
        a.token = static_cast<std::uint64_t>(value("token"));
      } else if (e.word == "tick") {
        a.writes.push_back({value("begun_ns"), e.ns});
      } else if (e.word == "lease") {
        a.leases.push_back({e.ns, value("valid_until_ns")});
      } else if (e.word == "refused") {
        ++a.refused;
      } else if (e.word == "stop") {
        a.stop_ns = e.ns;
      }
    }
    h.accepted = fence_->history();
    for (const auto& [id, p] : pauses_) h.pauses.push_back(p);
    h.faults = applied_;
    h.faults.insert(h.faults.end(), extra_faults_.begin(), extra_faults_.end());
    return h;
  }

  std::string diagnostics() const {
    std::string out;
    if (world_) out += world_->diagnostics();
    for (const auto& [i, n] : nodes_) {
      std::string text = read_file(dir_ / ("n" + std::to_string(i) + ".log"));
      if (text.size() > 8000) text = "...\n" + text.substr(text.size() - 8000);
      out += "---- " + name_of(i) + "\n" + text;
    }
    return out;
  }

  void keep_files() const {
    if (o_.keep_dir.empty()) return;
    std::error_code ec;
    std::filesystem::create_directories(o_.keep_dir, ec);
    for (const auto& entry : std::filesystem::directory_iterator(dir_.path(), ec)) {
      if (entry.path().extension() == ".log") {
        std::filesystem::copy_file(entry.path(), o_.keep_dir / entry.path().filename(),
                                   std::filesystem::copy_options::overwrite_existing, ec);
      }
    }
    std::ofstream(o_.keep_dir / "schedule.txt") << to_text(o_.params, faults_);
  }

  const run_options& o_;
  const std::vector<fault>& faults_;
  std::int64_t ttl_ms_;
  std::string election_;
  testing::temp_dir dir_{"bcmp-"};
  std::filesystem::path events_;
  event_log log_;
  std::unique_ptr<store_world> world_;
  std::unique_ptr<fence_resource> fence_;
  std::map<int, node> nodes_;
  int next_newcomer_ = 100;
  std::int64_t t0_ = 0;
  std::vector<applied_fault> applied_;
  std::vector<applied_fault> extra_faults_;  // the backup, when it restarted the store
  std::vector<std::int64_t> pending_ends_;
  std::map<int, std::unique_ptr<testing::fault_proxy>> proxies_;  // node -> its store link
  std::set<int> links_cut_;                                       // nodes whose link a fault holds
  std::map<int, int> targets_;                                    // fault id -> node index
  std::set<int> retired_;                                         // newcomers whose join has ended
  std::vector<int> store_faults_;                                 // fault ids the world holds
  std::map<int, host_pause> pauses_;                              // fault id -> host pause
};

}  // namespace

std::filesystem::path campaign_app_binary() {
  return CAMPAIGN_APP_BINARY;
}

run_outcome run_campaign(const run_options& o, const std::vector<fault>& faults) {
  campaign c(o, faults);
  return c.run();
}

}  // namespace baton::campaign
