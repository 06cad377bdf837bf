// One Redis server as a lease store uses it: a pipelined command connection
// that runs the lease scripts (EVAL on a connection's first call of each,
// which loads it, EVALSHA after), and the server's own reset fence.
// The connection reads Redis's run_id on every (re)connect; when it differs
// from the one seen before (a restart or a failover), the fence script runs on
// the new connection ahead of every queued command, holding each candidate's
// acquire back for one ttl and lifting the token counter to the server's
// clock; a replicated store's node runs the switch script there instead,
// which fences unless the new server shows it was promoted with every
// acknowledged write (scripts.hpp). The single-server store is one node; the
// Redlock store is N.
#pragma once

#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "baton/lease_store.hpp"
#include "connection.hpp"
#include "master_locator.hpp"
#include "scripts.hpp"

namespace baton::redis_detail {

struct node_options {
  /// Where and how to connect; on_ready is the node's own.
  connection_options connection;
  /// The election's token counter and fence keys on this server.
  std::string token_key;
  std::string fence_key;
  milliseconds ttl{0};
  /// Replicated stores: the switch script's keys (token, fence, epoch,
  /// replicas, acked) and arguments after the ttl (the requirement, "acked"
  /// or ""), run on a new server instead of the fence script. Empty = the
  /// fence script.
  std::vector<std::string> switch_keys;
  std::vector<std::string> switch_args;
  /// Acquisitions are held back after the run_id changed (this node's fence,
  /// or, replicated, another candidate's); `why` names both ids.
  std::function<void(const std::string& why)> on_reset;
  /// Replicated: the run_id changed to a promoted replica that had every
  /// acknowledged write, and nothing is held back; `why` names both ids.
  std::function<void(const std::string& why)> on_promotion;
  /// Setting that fence failed (left for the next connection to retry).
  std::function<void(store_error)> on_failure;
  /// Sentinel, Cluster: where the master is. With it, a server that answers
  /// as a replica would (READONLY, NOREPLICAS, ...) is left for a new
  /// connection, which locates the master again; in a Cluster a MOVED is
  /// followed (the locator learns the new owner), an ASK is sent once to the
  /// node it names, and a TRYAGAIN is retried shortly. nullptr = one fixed
  /// server.
  std::shared_ptr<master_locator> locator;
};

/// A script's reply and that of the command sent right behind it on the
/// same connection (WAIT), when one was asked for.
struct eval_reply {
  command_result script;
  std::optional<command_result> follow_up;
};

class redis_node : public std::enable_shared_from_this<redis_node> {
 public:
  static std::shared_ptr<redis_node> create(boost::asio::io_context& io, node_options options);
  ~redis_node();
  redis_node(const redis_node&) = delete;
  redis_node& operator=(const redis_node&) = delete;

  /// Runs `script` with `keys` and `args`; `done` runs exactly once, posted
  /// (operation_aborted after close()).
  void eval(const lua_script& script, std::vector<std::string> keys, std::vector<std::string> args,
            std::function<void(command_result)> done);
  /// The same, with `follow_up` (not empty) pipelined right behind the
  /// script on the same connection, and sent again with it whenever the
  /// script is (NOSCRIPT, a redirect): WAIT only counts the replicas that
  /// acknowledged this connection's writes.
  void eval_with(const lua_script& script, std::vector<std::string> keys,
                 std::vector<std::string> args, std::vector<std::string> follow_up,
                 std::function<void(eval_reply)> done);
  /// Runs one plain command (PING, to connect first).
  void exec(std::vector<std::string> command, std::function<void(command_result)> done);
  /// The run_id of the server the connection last talked to ("" = none yet).
  const std::string& server_id() const { return run_id_; }
  /// See connection::generation.
  std::uint64_t connection_generation() const { return conn_->generation(); }
  /// Drops the connection; the next command connects (and locates) again.
  void reconnect(const std::string& why);
  connection::state current_state() const;
  /// Where the connection goes (or went): "host:port", or "" before the first.
  const std::string& peer() const { return conn_->peer(); }
  /// Final: fails what is pending with operation_aborted; no callback after.
  void close();

 private:
  redis_node(boost::asio::io_context& io, node_options options);
  struct attempt;
  void on_server(const std::string& id);
  // The EVAL run on a new server: the fence, or the switch check.
  std::vector<std::string> switch_command() const;
  void run(const std::shared_ptr<attempt>& a);
  void run_asking(const std::shared_ptr<attempt>& a, master_address where);
  void on_replies(const std::shared_ptr<attempt>& a, eval_reply replies);

  boost::asio::io_context& io_;
  node_options options_;
  std::shared_ptr<connection> conn_;
  // The run_id of the server the connection last talked to ("" = none yet).
  std::string run_id_;
  // Per script (SHA1): the connection generation its EVAL was sent on.
  std::map<std::string, std::uint64_t> loaded_on_;
  bool closed_ = false;
};

}  // namespace baton::redis_detail
