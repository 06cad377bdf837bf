// One round's election for the fault scenarios (see fault_cluster.hpp).

#include "fault_cluster.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <thread>

namespace baton::testing {

using namespace std::chrono_literals;

std::int64_t mono_now_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

double ms_between(std::int64_t from_ns, std::int64_t to_ns) {
  return static_cast<double>(to_ns - from_ns) / 1e6;
}

std::filesystem::path deadline_worker_binary() {
  return FAULT_DEADLINE_WORKER;
}

std::filesystem::path fenced_writer_binary() {
  return FAULT_FENCED_WRITER;
}

fault_cluster::fault_cluster(std::string election, std::chrono::milliseconds ttl, bool own_redis)
    : election_(std::move(election)), ttl_(ttl), events_(dir_ / "events.log") {
  if (own_redis) redis_ = std::make_unique<redis_server>();
}

fault_cluster::~fault_cluster() {
  thaw_all();
  nodes_.clear();  // SIGKILLs each daemon's process group; the keepers then kill their apps
  // A keeper that was itself killed or frozen leaves its worker: kill those
  // (only live test workers writing to this log, checked in /proc).
  const event_log log = event_log::read(events_);
  kill_leftover_workers(log);
  kill_leftover_deadline_workers(log);
  redis_.reset();
}

void fault_cluster::kill_leftover_deadline_workers(const event_log& log) const {
  for (const interval& w : log.open_intervals()) {
    std::ifstream in("/proc/" + std::to_string(w.pid) + "/cmdline");
    std::string cmdline{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    // argv[0] is one of this suite's apps and this log's path is among its
    // arguments.
    const auto program = std::filesystem::path(cmdline.substr(0, cmdline.find('\0'))).filename();
    if ((program == "deadline_worker" || program == "fenced_writer") &&
        cmdline.find(events_.string()) != std::string::npos) {
      ::kill(w.pid, SIGKILL);
    }
  }
}

std::filesystem::path fault_cluster::socket_of(int index) const {
  return dir_ / ("n" + std::to_string(index) + ".sock");
}

baton_process& fault_cluster::start_node(int index, const node_options& options) {
  if (has_node(index)) throw std::logic_error("node " + std::to_string(index) + " already started");
  const bool on_redis = options.store_args.empty() && !options.store_in_env;
  const std::string url = !options.redis_url.empty() ? options.redis_url
                          : redis_                   ? redis_->url()
                                                     : std::string();
  if (on_redis && url.empty()) throw std::logic_error("no Redis for node " + std::to_string(index));
  if (on_redis && redis_ && !token_seeded_) {
    // A long-lived Redis already holds the election's fencing counter; a
    // fresh one without it counts as "lost its data", and baton then holds
    // every acquisition back for one ttl. Seeding it keeps rounds short.
    redis_->command({"SET", "baton:{" + election_ + "}:token", "1", "NX"});
    token_seeded_ = true;
  }
  std::vector<std::string> args = {"run",
                                   "--election",
                                   election_,
                                   "--node-id",
                                   name_of(index),
                                   "--ttl",
                                   std::to_string(ttl_.count()) + "ms",
                                   "--stop-timeout",
                                   "3s",
                                   "--socket",
                                   socket_of(index).string(),
                                   "--log-level",
                                   "debug"};
  if (on_redis) {
    args.insert(args.end(), {"--redis-url", url});
  } else {
    args.insert(args.end(), options.store_args.begin(), options.store_args.end());
  }
  args.insert(args.end(), options.baton_args.begin(), options.baton_args.end());
  if (!options.no_child) {
    args.emplace_back("--");
    if (!options.command.empty()) {
      args.insert(args.end(), options.command.begin(), options.command.end());
    } else if (options.deadline_worker) {
      args.insert(args.end(), {deadline_worker_binary().string(), "--log", events_.string(),
                               "--name", name_of(index), "--socket", socket_of(index).string()});
    } else {
      args.insert(args.end(), {test_worker_binary().string(), "--log", events_.string(), "--name",
                               name_of(index)});
    }
    args.insert(args.end(), options.worker_args.begin(), options.worker_args.end());
  }
  auto process = std::make_unique<baton_process>(args, options.env,
                                                 dir_ / ("n" + std::to_string(index) + ".log"));
  nodes_.emplace_back(index, std::move(process));
  return *nodes_.back().second;
}

baton_process& fault_cluster::node(int index) {
  for (auto& [i, p] : nodes_) {
    if (i == index) return *p;
  }
  throw std::logic_error("no node " + std::to_string(index));
}

bool fault_cluster::has_node(int index) const {
  return std::any_of(nodes_.begin(), nodes_.end(), [&](const auto& n) { return n.first == index; });
}

int fault_cluster::index_of(const interval& w) {
  return w.name.starts_with("node-") ? std::stoi(w.name.substr(5)) : -1;
}

std::optional<interval> fault_cluster::wait_for_single_worker(std::chrono::milliseconds timeout,
                                                              std::string* why) {
  event_log log(events_);
  std::optional<interval> current;
  const bool ok = wait_for(
      log,
      [&](const event_log& l) {
        auto live = l.live_workers();
        if (live.size() != 1 || live[0].ticks == 0) return false;
        current = live[0];
        return true;
      },
      timeout);
  if (ok) return current;
  if (why != nullptr) {
    *why = "no single working app within " + std::to_string(timeout.count()) + " ms (" +
           std::to_string(log.live_workers().size()) + " live)\n" + logs();
  }
  return std::nullopt;
}

std::optional<nlohmann::json> fault_cluster::status(int index, std::chrono::milliseconds timeout) {
  auto reply = socket_request(socket_of(index), R"({"cmd":"status"})", timeout);
  if (!reply) return std::nullopt;
  auto parsed = nlohmann::json::parse(*reply, nullptr, false);
  if (parsed.is_discarded() || !parsed.is_object()) return std::nullopt;
  return parsed;
}

long long fault_cluster::lease_pttl() {
  try {
    auto reply = redis_->command({"PTTL", "baton:{" + election_ + "}:lease"});
    return reply.empty() ? -2 : std::stoll(reply[0]);
  } catch (const std::exception&) {
    return -3;
  }
}

std::optional<std::int64_t> fault_cluster::lease_expires_ns() {
  const std::int64_t before = mono_now_ns();
  const long long pttl = lease_pttl();
  if (pttl < 0) return std::nullopt;
  return before + pttl * 1'000'000;
}

std::uint64_t fault_cluster::stored_token() {
  try {
    auto reply = redis_->command({"GET", "baton:{" + election_ + "}:token"});
    return reply.empty() ? 0 : std::stoull(reply[0]);
  } catch (const std::exception&) {
    return 0;
  }
}

void fault_cluster::freeze_group(pid_t pgid) {
  if (pgid <= 1) throw std::logic_error("refusing to signal process group " + std::to_string(pgid));
  frozen_.emplace_back(pgid, true);
  ::kill(-pgid, SIGSTOP);
}

void fault_cluster::freeze_process(pid_t pid) {
  if (pid <= 1) throw std::logic_error("refusing to signal pid " + std::to_string(pid));
  frozen_.emplace_back(pid, false);
  ::kill(pid, SIGSTOP);
}

void fault_cluster::thaw_all() {
  for (const auto& [id, group] : frozen_) ::kill(group ? -id : id, SIGCONT);
  frozen_.clear();
}

std::string fault_cluster::log_of(int index) const {
  for (const auto& [i, p] : nodes_) {
    if (i == index) return p->log_text();
  }
  return {};
}

std::string fault_cluster::logs() const {
  std::string all = "==== election " + election_ + "\n";
  for (const auto& [i, p] : nodes_) {
    all += "---- " + name_of(i) + " (" + p->log_path().string() + ")\n" + p->log_text();
  }
  std::ifstream in(events_);
  std::string events{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  // The worker log can be long (a tick every 5 ms): keep its end.
  if (events.size() > 6000) events = "...\n" + events.substr(events.size() - 6000);
  all += "---- events\n" + events;
  return all;
}

bool process_stopped(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  const auto paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() &&
         (stat[paren + 2] == 'T' || stat[paren + 2] == 't');
}

exit_watch::exit_watch(pid_t pid) {
  pidfd_ = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (pidfd_ < 0 && errno == ESRCH) seen_ = mono_now_ns();  // already gone
}

exit_watch::~exit_watch() {
  if (pidfd_ >= 0) ::close(pidfd_);
}

std::optional<std::int64_t> exit_watch::wait(std::chrono::milliseconds timeout) {
  if (seen_ || pidfd_ < 0) return seen_;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (int rounds = 0; rounds < 100'000; ++rounds) {
    pollfd pfd{pidfd_, POLLIN, 0};
    const auto left =
        std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now())
            .count();
    const int rc = ::poll(&pfd, 1, static_cast<int>(std::clamp<long long>(left, 0, 60'000)));
    if (rc > 0) {
      seen_ = mono_now_ns();
      return seen_;
    }
    if (rc < 0 && errno == EINTR) continue;
    if (left <= 0 || rc == 0) return std::nullopt;
  }
  return std::nullopt;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

}  // namespace baton::testing
