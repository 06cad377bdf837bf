// One campaign run (see campaign_run.hpp): the candidates, the run from
// start to verdict, and the history read back from the apps' event log and
// the resource. The faults are campaign_faults.cpp's.
#include "campaign/campaign_run.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <iterator>

#include "baton/lease_drift.hpp"
#include "campaign/campaign.hpp"
#include "campaign/orphan_guard.hpp"
#include "support/built_paths.hpp"

namespace baton::campaign {

using namespace std::chrono_literals;

std::filesystem::path campaign_app_binary();

namespace {

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

run_outcome campaign::run() {
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

std::filesystem::path campaign::socket_of(int i) const {
  return dir_ / ("n" + std::to_string(i) + ".sock");
}

void campaign::start(int i) {
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
void campaign::kill_daemon(int i) {
  if (nodes_[i].daemon) unguard_group(nodes_[i].daemon->pgid());
  nodes_[i].daemon.reset();
  nodes_[i].state = node_state::down;
}

// SIGTERM: a clean stop (the app stopped, the lease released), bounded.
void campaign::stop_cleanly(int i) {
  node& n = nodes_[i];
  if (n.daemon) {
    n.daemon->signal(SIGTERM);
    n.daemon->wait_exit(std::chrono::milliseconds(3 * ttl_ms_) + 5s);
  }
  kill_daemon(i);
}

// The node whose app works now (alive, started, not stopped), if any.
std::optional<testing::interval> campaign::working_app() {
  log_.refresh();
  return log_.current_worker([this](pid_t p) { return app_alive(p); });
}

int campaign::index_of(const std::string& name) {
  return name.starts_with("node-") ? std::atoi(name.c_str() + 5) : -1;
}

std::optional<testing::interval> campaign::wait_for_working_app(std::chrono::milliseconds within) {
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

std::vector<int> campaign::nodes_in(node_state state, int except) const {
  std::vector<int> out;
  for (const auto& [i, n] : nodes_) {
    if (n.state == state && i != except) out.push_back(i);
  }
  return out;
}

// Runs `baton <args>` as an operator would, bounded.
std::string campaign::run_cli(std::vector<std::string> args, const std::string& name) {
  baton_process p(std::move(args), testing::env_list{}, dir_ / (name + ".log"));
  const auto code = p.wait_exit(5s);
  return code ? "exit " + std::to_string(*code) : "still running after 5 s";
}

void campaign::stop_everything() {
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
void campaign::kill_leftover_apps() {
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

void campaign::clean_up() {
  try {
    end_everything();
  } catch (const std::exception&) {
  }
  stop_everything();
}

history campaign::read_history(std::int64_t end) {
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

std::string campaign::diagnostics() const {
  std::string out;
  if (world_) out += world_->diagnostics();
  for (const auto& [i, n] : nodes_) {
    std::string text = read_file(dir_ / ("n" + std::to_string(i) + ".log"));
    if (text.size() > 8000) text = "...\n" + text.substr(text.size() - 8000);
    out += "---- " + name_of(i) + "\n" + text;
  }
  return out;
}

void campaign::keep_files() const {
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

std::filesystem::path campaign_app_binary() {
  return CAMPAIGN_APP_BINARY;
}

run_outcome run_campaign(const run_options& o, const std::vector<fault>& faults) {
  campaign c(o, faults);
  return c.run();
}

}  // namespace baton::campaign
