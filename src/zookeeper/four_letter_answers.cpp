#include "four_letter_answers.hpp"

#include <algorithm>
#include <charconv>
#include <sstream>

#include "store/check_lines.hpp"

namespace baton::zookeeper_detail {
namespace {

std::optional<std::int64_t> number(std::string_view text) {
  std::int64_t v = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc{} || ptr != end) return std::nullopt;
  return v;
}

std::string ms(std::int64_t v) {
  return std::to_string(v) + " ms";
}

}  // namespace

bool refused_by_whitelist(std::string_view answer) {
  return answer.find("not in the whitelist") != std::string_view::npos;
}

bool not_serving(std::string_view answer) {
  return answer.find("not currently serving requests") != std::string_view::npos;
}

check_line auth_line(const std::string& username) {
  if (username.empty()) {
    return {check_verdict::note, "auth",
            "none: any client of the ensemble can change or delete the election's nodes; keep the "
            "client port on loopback or a private network (or set zookeeper.username for digest "
            "ACLs)"};
  }
  return {check_verdict::hazard, "auth",
          "digest as " + username +
              ": its password crosses the connection in plaintext at every connect (the "
              "ZooKeeper C client has no TLS), readable by anyone who sees the traffic to the "
              "client port; the election's nodes get ACLs creator-all + world-read"};
}

std::vector<check_line> srvr_lines(std::string_view answer, std::string_view where,
                                   std::chrono::nanoseconds took) {
  std::string version;
  std::string mode;
  std::istringstream lines{std::string(answer)};
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("Zookeeper version: ")) version = line.substr(19);
    if (line.starts_with("Mode: ")) mode = line.substr(6);
  }
  std::vector<check_line> out;
  if (version.empty()) {
    out.push_back({check_verdict::hazard, "reachable",
                   std::string(where) +
                       ": answers, but not to srvr (is it allowed in 4lw.commands.whitelist?)"});
  } else {
    out.push_back({check_verdict::ok, "reachable", std::string(where)});
    out.push_back(
        {check_verdict::ok, "version", "ZooKeeper " + version.substr(0, version.find(','))});
    out.push_back(
        {mode == "standalone" ? check_verdict::note : check_verdict::ok, "mode",
         mode + (mode == "standalone" ? ": one server, no quorum to survive its loss" : "")});
  }
  out.push_back({check_verdict::ok, "latency", store_check_detail::ms_text(took) + " for srvr"});
  return out;
}

server_conf parse_conf(std::string_view answer) {
  server_conf c;
  std::istringstream lines{std::string(answer)};
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto eq = line.find('=');
    if (eq == std::string::npos) continue;
    const auto key = std::string_view(line).substr(0, eq);
    const auto value = number(std::string_view(line).substr(eq + 1));
    if (key == "tickTime") c.tick_ms = value;
    if (key == "initLimit") c.init_limit = value;
    if (key == "syncLimit") c.sync_limit = value;
    if (key == "minSessionTimeout") c.min_session_ms = value;
    if (key == "maxSessionTimeout") c.max_session_ms = value;
  }
  return c;
}

check_line weigh_stale_follower_window(std::int64_t tick_ms, std::int64_t sync_limit,
                                       const lease_timing& timing) {
  const auto ttl = timing.ttl.count();
  const auto interval = timing.renew_interval.count() > 0 ? timing.renew_interval.count() : ttl / 3;
  const auto deadline =
      timing.renew_deadline.count() > 0 ? timing.renew_deadline.count() : ttl * 2 / 3;
  // A cut just before a renewal is due leaves the leader the deadline less
  // the interval to get a renewal through: the window must end before that.
  const auto room = deadline - interval;
  const auto window = tick_ms * sync_limit;
  check_line line{check_verdict::ok, "stale reads",
                  "syncLimit * tickTime = " + std::to_string(sync_limit) + " * " + ms(tick_ms) +
                      " = " + ms(window) +
                      ": a follower cut off from the quorum serves its "
                      "clients that long"};
  if (window <= room) {
    line.text += "; within the " + ms(room) +
                 " a leader's renewals may fail before it stops (lease.renew_deadline - "
                 "lease.renew_interval)";
    return line;
  }
  line.verdict = check_verdict::hazard;
  line.text += ", longer than the " + ms(room) +
               " a leader's renewals may fail before it stops (lease.renew_deadline " +
               ms(deadline) + " - lease.renew_interval " + ms(interval) +
               "): a leader whose session is on that follower loses the lease";
  if (window >= ttl) line.text += ", and standbys hear of a change up to a whole ttl late";
  // What to set: syncLimit at this tick, or a ttl that leaves the room
  // (with the default renewal timing, a third of the ttl).
  const auto fitting_sync = tick_ms > 0 ? room / tick_ms : 0;
  line.text += " (set ";
  if (fitting_sync >= 1) {
    line.text +=
        "syncLimit <= " + std::to_string(fitting_sync) + " at tickTime " + ms(tick_ms) + ", or ";
  }
  line.text += "lease.ttl >= " + ms(3 * window) + " with the default renewal timing)";
  return line;
}

check_line conf_line(std::string_view answer) {
  if (refused_by_whitelist(answer)) {
    return {check_verdict::note, "conf",
            "conf is not allowed (4lw.commands.whitelist): syncLimit * tickTime is not weighed "
            "against the ttl here; add conf to the whitelist to have it checked"};
  }
  const auto c = parse_conf(answer);
  if (!c.tick_ms) return {check_verdict::note, "conf", "conf answered no tickTime"};
  std::string figures = "tickTime " + ms(*c.tick_ms);
  if (c.init_limit) figures += ", initLimit " + std::to_string(*c.init_limit);
  if (c.sync_limit) figures += ", syncLimit " + std::to_string(*c.sync_limit);
  if (c.min_session_ms && c.max_session_ms) {
    figures += ", sessions granted within [" + std::to_string(*c.min_session_ms) + ", " +
               ms(*c.max_session_ms) + "]";
  }
  return {check_verdict::note, "conf", figures};
}

check_line stale_follower_line(const std::vector<std::optional<server_conf>>& confs,
                               const lease_timing& timing, std::size_t servers_listed) {
  std::optional<server_conf> widest;
  bool standalone = false;
  for (const auto& c : confs) {
    if (!c || !c->tick_ms) continue;
    if (!c->sync_limit) {
      standalone = true;
      continue;
    }
    if (!widest || *c->tick_ms * *c->sync_limit > *widest->tick_ms * *widest->sync_limit)
      widest = c;
  }
  if (widest && servers_listed < 3) {
    return weigh_stale_follower_window(*widest->tick_ms, *widest->sync_limit, timing);
  }
  if (widest) {
    // A cut-off follower answers no write: the leader's session leaves it
    // as it leaves a stalled server (the stall line); what is left is how
    // late a standby reading from it hears of a change.
    const auto window = *widest->tick_ms * *widest->sync_limit;
    check_line line{check_verdict::ok, "stale reads",
                    "syncLimit * tickTime = " + std::to_string(*widest->sync_limit) + " * " +
                        ms(*widest->tick_ms) + " = " + ms(window) +
                        ": a follower cut off from the quorum serves reads that long; a leader's "
                        "session leaves it as it leaves a stalled server"};
    if (window >= timing.ttl.count()) {
      line.verdict = check_verdict::note;
      line.text += "; standbys on it hear of a change up to a whole ttl late";
    }
    return line;
  }
  if (standalone) {
    return {check_verdict::note, "stale reads",
            "standalone: no followers, so no stale-follower window (an ensemble's "
            "syncLimit * tickTime is weighed against the ttl)"};
  }
  return {check_verdict::note, "stale reads",
          "no server's conf gave tickTime and syncLimit: syncLimit * tickTime is not weighed here"};
}

check_line stall_line(const lease_timing& timing, milliseconds command_timeout,
                      std::size_t servers_listed) {
  const auto ttl = timing.ttl.count();
  const auto interval = timing.renew_interval.count() > 0 ? timing.renew_interval.count() : ttl / 3;
  const auto deadline =
      timing.renew_deadline.count() > 0 ? timing.renew_deadline.count() : ttl * 2 / 3;
  const auto room = deadline - interval;
  if (servers_listed < 3) {
    return {check_verdict::note, "stall",
            "one server may stall (a GC pause, a stalled VM) for less than " + ms(room) +
                " (lease.renew_deadline - lease.renew_interval) before a leader whose session is "
                "on it stops: with " +
                std::to_string(servers_listed) +
                " server(s) listed the session has nowhere to move (list three or more)"};
  }
  // The worst case: the stall begins as a renewal is sent; the store leaves
  // the server command_timeout later, the retry goes renew_interval / 4
  // after that failure, on the next server.
  const auto retry = std::max<std::int64_t>(interval / 4, 1);
  const auto needed = command_timeout.count() + retry;
  const std::string how = "the session leaves a server that answers nothing for " +
                          ms(command_timeout.count()) +
                          " (zookeeper.command_timeout) and the renewal is tried again " +
                          ms(retry) + " later on another";
  if (needed < room) {
    return {check_verdict::ok, "stall",
            "one server may stall (a GC pause, a stalled VM) for any length: " + how + ", " +
                ms(needed) + " of the " + ms(room) +
                " a leader's renewals may fail (lease.renew_deadline - lease.renew_interval); "
                "the ensemble's leader stalls every write until the others elect another"};
  }
  return {check_verdict::hazard, "stall",
          "a stalled server ends the term of a leader whose session is on it: " + how + ", " +
              ms(needed) + ", not within the " + ms(room) +
              " a leader's renewals may fail (lower zookeeper.command_timeout below " +
              ms(room - retry) + ")"};
}

}  // namespace baton::zookeeper_detail
