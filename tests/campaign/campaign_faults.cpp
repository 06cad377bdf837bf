// The faults of a campaign run: each begun on its target (a daemon, an
// app, a host, a link, the store) at its time and ended after its hold,
// those still on ended at the end of the run.
#include <signal.h>
#include <unistd.h>

#include <algorithm>

#include "baton/lease_drift.hpp"
#include "campaign/campaign.hpp"
#include "campaign/orphan_guard.hpp"

namespace baton::campaign {

using namespace std::chrono_literals;

// The daemon-level target of `f`: a node index, or -1 to skip.
int campaign::daemon_target(const fault& f, pid_t* app) {
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

// Begins fault `id`; fills `a` (target, forcing) or marks it skipped.
void campaign::begin(int id, const fault& f, applied_fault& a) {
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

void campaign::end(int id, const fault& f) {
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

void campaign::inject_all() {
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
void campaign::end_everything() {
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

}  // namespace baton::campaign
