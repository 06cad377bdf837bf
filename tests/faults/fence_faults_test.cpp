// The fences of fence/ under the one fault no lease can close: the whole
// leader host (daemon, keeper and app) paused past the lease. A leader's app
// (fenced_writer) writes in a loop through the fence with the token baton gave
// it in BATON_TOKEN; the host is SIGSTOPped; another node takes over and
// writes; then the frozen app is thawed first, before its keeper and daemon
// (the worst order a scheduler can pick: the app runs and nothing stops it).
// Its next write must be refused and it stops; the resource's own history, in
// the order writes landed, must show tokens that never go back. The same
// schedule without the fence is the control: there the old app's writes land
// between the new leader's.
//
// Before the faults, a table of tokens checks what each fence accepts and
// refuses, keyed by resource.
#include <libpq-fe.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <iterator>

#include "scenario.hpp"
#include "support/built_paths.hpp"
#include "support/servers/postgres_server.hpp"

namespace baton::testing::fence_faults_test {
namespace {

constexpr auto ttl = 2000ms;
// How long the control run lets the thawed old app write unfenced.
constexpr auto unfenced_window = 300ms;

std::string fence_file(const std::string& relative) {
  const auto path = std::filesystem::path(source_root_path()) / "fence" / relative;
  std::ifstream in(path);
  std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (text.empty()) throw std::runtime_error("cannot read " + path.string());
  return text;
}

std::string redis_script_path() {
  return (std::filesystem::path(source_root_path()) / "fence/redis/baton_fence.lua").string();
}

// A PostgreSQL server with the fence loaded as a user would (psql -f), and
// the app's own table, the history its writes append to.
void prepare_postgres(const postgres_server& pg) {
  pg.query("SET client_min_messages TO warning;\n" + fence_file("postgresql/baton_fence.sql"));
  pg.query(
      "SET client_min_messages TO warning; CREATE TABLE IF NOT EXISTS fence_history (id bigserial "
      "PRIMARY KEY, resource text NOT NULL, "
      "token bigint NOT NULL, seq bigint NOT NULL, writer text NOT NULL)");
}

// One write in the history: the token it was made with and who made it.
struct landed_write {
  std::uint64_t token = 0;
  std::string writer;  // "node-N:seq"
};

// Where the app writes, and how the test reads back what landed.
struct fence_target {
  std::string kind;
  std::function<std::vector<std::string>(const std::string& resource)> writer_args;
  std::function<std::vector<landed_write>(const std::string& resource)> history;
  std::function<node_options()> node;
};

fence_target postgres_target(const postgres_server& pg) {
  fence_target t;
  t.kind = "postgres";
  t.writer_args = [&pg](const std::string& resource) {
    return std::vector<std::string>{"--resource", resource, "--postgres", pg.conninfo()};
  };
  t.history = [&pg](const std::string& resource) {
    std::vector<landed_write> out;
    for (const auto& row : pg.query("SELECT token, writer || ':' || seq FROM fence_history "
                                    "WHERE resource = '" +
                                    resource + "' ORDER BY id")) {
      out.push_back({std::stoull(row.at(0)), row.at(1)});
    }
    return out;
  };
  t.node = [&pg] {
    // The cluster's Redis flag is given but unused: the store kind decides.
    node_options o = via_redis_url("redis://127.0.0.1:1");
    o.baton_args = {"--store-kind", "postgres", "--postgres-url", pg.conninfo()};
    return o;
  };
  return t;
}

fence_target redis_target(fault_cluster& c) {
  fence_target t;
  t.kind = "redis";
  t.writer_args = [&c](const std::string& resource) {
    return std::vector<std::string>{"--resource", resource,
                                    "--redis",    "127.0.0.1:" + std::to_string(c.redis().port()),
                                    "--script",   redis_script_path()};
  };
  t.history = [&c](const std::string& resource) {
    std::vector<landed_write> out;
    for (const auto& entry :
         c.redis().command({"LRANGE", "app:{" + resource + "}:history", "0", "-1"})) {
      const auto space = entry.find(' ');
      out.push_back({std::stoull(entry.substr(0, space)), entry.substr(space + 1)});
    }
    return out;
  };
  t.node = [] { return node_options{}; };
  return t;
}

// What one round found.
struct round_outcome {
  std::uint64_t old_token = 0;
  std::uint64_t new_token = 0;
  std::size_t old_landed = 0;      // the old app's writes in the history
  std::size_t old_after_thaw = 0;  // of those, logged as landed after the thaw
  std::size_t new_landed = 0;      // the new app's writes in the history
  std::size_t refused = 0;         // the old app's refused writes
  std::size_t stale = 0;           // writes that landed after a higher token had
  std::size_t old_after_new = 0;   // old writes that landed after the new term's first
  double started_ms = 0;           // from the freeze to the new app's start
  std::optional<double> gone_ms;   // from the app's thaw until it was gone
};

// The keeper's pid (= its process group, which holds the app) from the
// daemon's status, checked against the app's actual process group.
std::optional<pid_t> keeper_group(fault_cluster& c, int index, pid_t app_pid) {
  auto status = c.status(index);
  if (!status || !status->contains("keeper_pid")) return std::nullopt;
  const auto keeper = (*status)["keeper_pid"].get<pid_t>();
  if (keeper <= 1 || ::getpgid(app_pid) != keeper) return std::nullopt;
  return keeper;
}

std::size_t count_words(const event_log& log, pid_t pid, const std::string& word,
                        std::int64_t after_ns = 0) {
  std::size_t n = 0;
  for (const auto& e : log.events()) {
    if (e.pid == pid && e.word == word && e.ns >= after_ns) ++n;
  }
  return n;
}

// One whole-host pause of the leader, as the file comment says; fenced or not.
std::optional<round_outcome> pause_round(fault_cluster& c, const fence_target& target, bool fenced,
                                         const std::string& diagnostics_extra = {}) {
  const std::string resource = c.election();
  for (int i = 1; i <= 2; ++i) {
    node_options o = target.node();
    o.command = {fenced_writer_binary().string(), "--log", c.events().string(), "--name",
                 fault_cluster::name_of(i)};
    const auto extra = target.writer_args(resource);
    o.command.insert(o.command.end(), extra.begin(), extra.end());
    if (!fenced) o.command.emplace_back("--unfenced");
    c.start_node(i, o);
  }
  std::string why;
  auto leader = c.wait_for_single_worker(20s, &why);
  EXPECT_TRUE(leader) << why << diagnostics_extra;
  if (!leader) return std::nullopt;
  const int l = fault_cluster::index_of(*leader);
  const auto keeper = keeper_group(c, l, leader->pid);
  EXPECT_TRUE(keeper) << "cannot find the keeper's process group\n" << c.logs();
  if (!keeper) return std::nullopt;
  exit_watch old_app(leader->pid);
  // Let it write a while first.
  wait_for(
      c.events(), [&](const event_log& x) { return count_words(x, leader->pid, "tick") >= 20; },
      5s);

  // The whole host: the keeper's group (keeper and app), then the daemon.
  const std::int64_t inject = mono_now_ns();
  c.freeze_group(*keeper);
  c.freeze_group(c.node(l).pgid());
  EXPECT_TRUE(wait_until(
      [&] { return process_stopped(leader->pid) && process_stopped(c.node(l).pid()); }, 2s));

  // The lease expires; the other node takes over and its app writes (unless
  // the frozen app holds the fence row in an open transaction: then the new
  // app's first write waits for it, and is ordered after it).
  event_log log(c.events());
  const bool taken_over = wait_for(
      log, [](const event_log& x) { return x.start_count() >= 2; }, ttl + 10s);
  EXPECT_TRUE(taken_over) << "no takeover during the pause\n" << c.logs();
  if (!taken_over) return std::nullopt;
  const auto next = first_started_after(log, inject);
  EXPECT_TRUE(next) << c.logs();
  if (!next) return std::nullopt;
  wait_for(
      log, [&](const event_log& x) { return count_words(x, next->pid, "tick") >= 5; }, 2s);

  // Thaw the app alone: nothing stops it now but the fence.
  const std::int64_t thaw = mono_now_ns();
  ::kill(leader->pid, SIGCONT);
  if (fenced) {
    EXPECT_TRUE(old_app.wait(5s)) << "the thawed old app was not refused and did not stop\n"
                                  << c.logs();
  } else {
    hold_fault_until(thaw + std::chrono::nanoseconds(unfenced_window).count());
  }
  c.thaw_all();  // the keeper and the daemon: the keeper kills an app still running
  const auto gone = old_app.wait(5s);
  EXPECT_TRUE(gone) << "the old app survived the thaw\n" << c.logs();
  // The new leader writes on.
  const std::size_t new_before = count_words(log, next->pid, "tick");
  EXPECT_TRUE(wait_for(
      log, [&](const event_log& x) { return count_words(x, next->pid, "tick") >= new_before + 10; },
      5s))
      << "the new leader's app stopped writing\n"
      << c.logs();

  round_outcome r;
  r.started_ms = ms_between(inject, next->start_ns);
  if (gone) r.gone_ms = ms_between(thaw, *gone);
  r.old_token = token_value(*leader);
  r.new_token = token_value(*next);
  r.refused = count_words(log, leader->pid, "refused");
  r.old_after_thaw = count_words(log, leader->pid, "tick", thaw);
  const std::string old_prefix = leader->name + ":";
  bool new_seen = false;
  std::uint64_t highest = 0;
  for (const auto& w : target.history(resource)) {
    const bool is_old = w.token == r.old_token && w.writer.starts_with(old_prefix);
    if (w.token < highest) ++r.stale;
    highest = std::max(highest, w.token);
    if (is_old) {
      ++r.old_landed;
      if (new_seen) ++r.old_after_new;
    } else if (w.token == r.new_token) {
      ++r.new_landed;
      new_seen = true;
    }
  }
  EXPECT_GT(r.new_token, r.old_token) << c.logs();
  EXPECT_GT(r.new_landed, 0u) << c.logs();
  return r;
}

void print_round(const std::string& what, int round, const round_outcome& r) {
  std::printf(
      "%s round %d: old token %llu landed %zu writes (%zu logged after the thaw), %zu after "
      "the new term's first write, %zu refused; new token %llu landed %zu; %zu history "
      "entries behind a higher token; the old app gone %.1f ms after its thaw\n",
      what.c_str(), round, static_cast<unsigned long long>(r.old_token), r.old_landed,
      r.old_after_thaw, r.old_after_new, r.refused, static_cast<unsigned long long>(r.new_token),
      r.new_landed, r.stale, r.gone_ms.value_or(-1));
}

void check_fenced(fault_cluster& c, const round_outcome& r) {
  EXPECT_EQ(r.stale, 0u) << "a write with an older token landed after a newer one\n" << c.logs();
  EXPECT_EQ(r.old_after_new, 0u) << "the old app wrote after the new term's first write\n"
                                 << c.logs();
  EXPECT_EQ(r.refused, 1u) << "the thawed app was not refused exactly once (it stops at once)\n"
                           << c.logs();
}

fault_record pause_record(const std::string& kind, const round_outcome& r) {
  fault_record record;
  record.kind = kind;
  record.overlaps = r.stale;
  record.started_ms = r.started_ms;
  record.gone_after_end_ms = r.gone_ms;
  return record;
}

// ---- what each fence accepts and refuses, keyed by resource ----

struct fence_step {
  std::string resource;
  std::uint64_t token;
  bool accepted;
};

const std::vector<fence_step> fence_steps = {
    {"orders", 5, true},    // first write of a resource
    {"orders", 5, true},    // the same term again
    {"orders", 7, true},    // a newer term
    {"orders", 5, false},   // the old term after the newer one
    {"orders", 6, false},   // a term in between
    {"invoices", 3, true},  // another resource keeps its own token
    {"invoices", 2, false}, {"orders", 7, true}, {"orders", 12, true}, {"orders", 9, false},
};

TEST(fence_faults, postgres_fence_accepts_rising_tokens_and_refuses_older_ones_per_resource) {
  postgres_server pg;
  prepare_postgres(pg);
  prepare_postgres(pg);  // loading it twice is harmless
  for (const auto& step : fence_steps) {
    const std::string sql =
        "BEGIN; SELECT baton_fence_check('" + step.resource + "', " + std::to_string(step.token) +
        "); INSERT INTO fence_history (resource, token, seq, writer) VALUES ('" + step.resource +
        "', " + std::to_string(step.token) + ", 0, 'table'); COMMIT;";
    bool accepted = true;
    std::string message;
    try {
      pg.query(sql);
    } catch (const std::runtime_error& e) {
      accepted = false;
      message = e.what();  // each query has its own session: the aborted one is gone
    }
    EXPECT_EQ(accepted, step.accepted)
        << step.resource << " token " << step.token << ": " << message;
    if (!accepted) {
      EXPECT_NE(message.find("is stale for resource \"" + step.resource + "\""), std::string::npos)
          << message;
    }
  }
  // Nothing of a refused transaction landed.
  EXPECT_EQ(pg.query("SELECT count(*) FROM fence_history")[0][0], "6");
  EXPECT_EQ(pg.query("SELECT token FROM baton_fence WHERE resource = 'orders'")[0][0], "12");
  // No token at all is a clear error, not a pass.
  EXPECT_THROW(pg.query("SELECT baton_fence_check('orders', NULL)"), std::runtime_error);
  EXPECT_THROW(pg.query("SELECT baton_fence_check('orders', 0)"), std::runtime_error);
}

TEST(fence_faults, redis_fence_accepts_rising_tokens_and_refuses_older_ones_per_resource) {
  redis_server redis;
  const std::string script = fence_file("redis/baton_fence.lua");
  for (const auto& step : fence_steps) {
    const std::string tag = "app:{" + step.resource + "}:";
    bool accepted = true;
    std::string message;
    try {
      redis.command({"EVAL", script, "3", tag + "value", tag + "fence", tag + "history",
                     std::to_string(step.token), "v" + std::to_string(step.token)});
    } catch (const std::runtime_error& e) {
      accepted = false;
      message = e.what();
    }
    EXPECT_EQ(accepted, step.accepted)
        << step.resource << " token " << step.token << ": " << message;
    if (!accepted) {
      EXPECT_NE(message.find("BATONFENCE stale token"), std::string::npos) << message;
    }
  }
  EXPECT_EQ(redis.command({"GET", "app:{orders}:value"}).at(0), "v12");
  EXPECT_EQ(redis.command({"GET", "app:{orders}:fence"}).at(0), "12");
  EXPECT_EQ(redis.command({"LLEN", "app:{orders}:history"}).at(0), "5");
  EXPECT_EQ(redis.command({"LLEN", "app:{invoices}:history"}).at(0), "1");
  // Tokens past a double's exact range still compare exactly.
  EXPECT_NO_THROW(
      redis.command({"EVAL", script, "2", "big", "big:fence", "9007199254740993", "x"}));
  EXPECT_THROW(redis.command({"EVAL", script, "2", "big", "big:fence", "9007199254740992", "x"}),
               std::runtime_error);
  // No token is a clear error.
  EXPECT_THROW(redis.command({"EVAL", script, "2", "k", "k:fence", "", "x"}), std::runtime_error);
}

// One session of its own, for statements that must overlap another's.
class pg_session {
 public:
  explicit pg_session(const postgres_server& pg)
      : connection_(PQconnectdb(pg.conninfo().c_str()), &PQfinish) {
    if (PQstatus(connection_.get()) != CONNECTION_OK) {
      throw std::runtime_error(PQerrorMessage(connection_.get()));
    }
  }
  // Runs `sql` and waits: "" on success, else SQLSTATE and message.
  std::string run(const std::string& sql) {
    send(sql);
    return wait(20s).value_or("timed out");
  }
  void send(const std::string& sql) {
    if (PQsendQuery(connection_.get(), sql.c_str()) != 1) {
      throw std::runtime_error(PQerrorMessage(connection_.get()));
    }
  }
  // The outcome of what send() sent, once the server answered within
  // `timeout`; nullopt while it still waits (on a lock, say).
  std::optional<std::string> wait(std::chrono::milliseconds timeout) {
    const bool answered = wait_until(
        [&] { return PQconsumeInput(connection_.get()) == 0 || PQisBusy(connection_.get()) == 0; },
        timeout);
    if (!answered) return std::nullopt;
    std::string outcome;
    while (PGresult* r = PQgetResult(connection_.get())) {
      const auto status = PQresultStatus(r);
      if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK && outcome.empty()) {
        const char* state = PQresultErrorField(r, PG_DIAG_SQLSTATE);
        outcome = std::string(state ? state : "?????") + " " + PQresultErrorMessage(r);
      }
      PQclear(r);
    }
    return outcome;
  }

 private:
  std::unique_ptr<PGconn, decltype(&PQfinish)> connection_;
};

std::string fenced_insert(const std::string& resource, int token, const std::string& writer) {
  return "SELECT baton_fence_check('" + resource + "', " + std::to_string(token) +
         "); INSERT INTO fence_history (resource, token, seq, writer) VALUES ('" + resource +
         "', " + std::to_string(token) + ", 0, '" + writer + "')";
}

// The cases a freeze can only hit by chance, made certain: a writer stopped
// inside its fenced transaction, against a writer of the other term.
TEST(fence_faults, postgres_fence_orders_writers_that_overlap_in_their_transactions) {
  postgres_server pg;
  prepare_postgres(pg);
  pg_session old_leader(pg), new_leader(pg);

  // The newer term holds the row; the older one waits on it, and once the
  // newer commits it is refused, not let through.
  EXPECT_EQ(new_leader.run("BEGIN; " + fenced_insert("a", 6, "new")), "");
  old_leader.send("BEGIN; " + fenced_insert("a", 5, "old"));
  EXPECT_FALSE(old_leader.wait(300ms)) << "the older writer did not wait for the row";
  EXPECT_EQ(new_leader.run("COMMIT"), "");
  const auto refused = old_leader.wait(10s);
  ASSERT_TRUE(refused);
  EXPECT_TRUE(refused->starts_with("BATON ")) << *refused;
  EXPECT_NE(refused->find("a newer leader exists"), std::string::npos) << *refused;
  old_leader.run("ROLLBACK");

  // The older term holds the row (frozen inside its transaction): the newer
  // waits; the older commits first, so its write comes first in the history,
  // and its next write is refused.
  EXPECT_EQ(old_leader.run("BEGIN; " + fenced_insert("b", 5, "old")), "");
  new_leader.send("BEGIN; " + fenced_insert("b", 6, "new"));
  EXPECT_FALSE(new_leader.wait(300ms)) << "the newer writer did not wait for the row";
  EXPECT_EQ(old_leader.run("COMMIT"), "");
  EXPECT_EQ(new_leader.wait(10s).value_or("timed out"), "");
  EXPECT_EQ(new_leader.run("COMMIT"), "");
  EXPECT_TRUE(old_leader.run(fenced_insert("b", 5, "old")).starts_with("BATON "));

  std::vector<std::string> order;
  for (const auto& row : pg.query("SELECT resource || ':' || token || ':' || writer FROM "
                                  "fence_history ORDER BY id")) {
    order.push_back(row.at(0));
  }
  EXPECT_EQ(order, (std::vector<std::string>{"a:6:new", "b:5:old", "b:6:new"}));
}

// The PostgreSQL examples of fence/README.md, run as the page shows them,
// with DATABASE_URL and BATON_TOKEN set as there.
TEST(fence_faults, postgres_page_examples_run_as_shown) {
  postgres_server pg;
  std::ifstream in(std::filesystem::path(source_root_path()) / "fence/README.md");
  std::string page{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  const auto section = page.find("\n## PostgreSQL");
  ASSERT_NE(section, std::string::npos);
  const auto section_end = page.find("\n## ", section + 1);
  std::vector<std::string> blocks;
  for (auto at = page.find("```sh\n", section); at < section_end; at = page.find("```sh\n", at)) {
    const auto body = at + 6;
    const auto end = page.find("```", body);
    blocks.push_back(page.substr(body, end - body));
    at = end + 3;
  }
  ASSERT_EQ(blocks.size(), 2u) << "the page's PostgreSQL examples changed: update this test";
  pg.query("CREATE TABLE orders (id int PRIMARY KEY, state text)");

  const auto run = [&](const std::string& script, int token, std::string* output) {
    temp_dir dir("bfx-");
    std::ofstream(dir / "example.sh") << script;
    const std::string command = "cd '" + std::string(source_root_path()) + "' && DATABASE_URL='" +
                                pg.conninfo() + "' BATON_TOKEN=" + std::to_string(token) +
                                " bash '" + (dir / "example.sh").string() + "' 2>&1";
    FILE* pipe = ::popen(command.c_str(), "r");
    if (pipe == nullptr) return -1;
    char buffer[512];
    while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) *output += buffer;
    const int status = ::pclose(pipe);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  std::string output;
  EXPECT_EQ(run(blocks[0], 7, &output), 0) << output;
  EXPECT_EQ(run(blocks[1], 7, &output), 0) << output;
  std::string refused;
  EXPECT_EQ(run(blocks[1], 5, &refused), 3) << "psql with ON_ERROR_STOP exits 3 on the refusal\n"
                                            << refused;
  EXPECT_NE(refused.find("token 5 is stale for resource \"orders\": token 7 has written since"),
            std::string::npos)
      << refused;
  EXPECT_EQ(pg.query("SELECT state FROM orders WHERE id = 42").at(0).at(0), "paid");
}

// ---- the whole-host pause ----

TEST(fence_faults, whole_host_pause_postgres_fence_refuses_the_thawed_old_app) {
  postgres_server pg;
  prepare_postgres(pg);
  const fence_target target = postgres_target(pg);
  std::size_t refused = 0, stale = 0, landed = 0;
  for (int round = 1; round <= rounds; ++round) {
    fault_cluster c(round_name(round), ttl, false);
    auto r = pause_round(c, target, true, "\npostgres log:\n" + pg.log_tail());
    ASSERT_TRUE(r);
    print_round("postgres fence", round, *r);
    check_fenced(c, *r);
    refused += r->refused;
    stale += r->old_after_new;
    landed += r->old_landed + r->new_landed;
    record_fault(
        pause_record("fence: whole-host pause > ttl, app thawed first, PostgreSQL fence", *r));
  }
  std::printf(
      "postgres fence: %d rounds, %zu writes landed, %zu stale writes refused, %zu landed\n",
      rounds, landed, refused, stale);
}

TEST(fence_faults, whole_host_pause_redis_fence_refuses_the_thawed_old_app) {
  std::size_t refused = 0, stale = 0, landed = 0;
  for (int round = 1; round <= rounds; ++round) {
    fault_cluster c(round_name(round), ttl);
    const fence_target target = redis_target(c);
    auto r = pause_round(c, target, true);
    ASSERT_TRUE(r);
    print_round("redis fence", round, *r);
    check_fenced(c, *r);
    refused += r->refused;
    stale += r->old_after_new;
    landed += r->old_landed + r->new_landed;
    record_fault(pause_record("fence: whole-host pause > ttl, app thawed first, Redis fence", *r));
  }
  std::printf("redis fence: %d rounds, %zu writes landed, %zu stale writes refused, %zu landed\n",
              rounds, landed, refused, stale);
}

// The control: the same pause and thaw without the fence. The old app's
// writes land between the new leader's, which is what the fence prevents
// (and shows that the history check above would see it).
TEST(fence_faults, whole_host_pause_without_a_fence_lets_the_old_app_write_between) {
  std::size_t stale = 0;
  for (int round = 1; round <= rounds; ++round) {
    fault_cluster c(round_name(round), ttl);
    const fence_target target = redis_target(c);
    auto r = pause_round(c, target, false);
    ASSERT_TRUE(r);
    print_round("no fence", round, *r);
    EXPECT_GT(r->old_after_new, 0u) << "the old app's writes did not land after the new term's\n"
                                    << c.logs();
    EXPECT_EQ(r->refused, 0u);
    stale += r->old_after_new;
    auto record = pause_record(
        "fence: whole-host pause > ttl, app thawed first, no fence "
        "(window 300 ms)",
        *r);
    record.window = true;
    record_fault(record);
  }
  std::printf("no fence: %d rounds, %zu stale writes landed after the new term's first write\n",
              rounds, stale);
}

}  // namespace
}  // namespace baton::testing::fence_faults_test
