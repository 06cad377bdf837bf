// One ZooKeeper session (a zhandle_t of the single-threaded C client) driven
// from the asio loop: zookeeper_interest() names the socket, what to wait
// for and how long; the socket is watched through a non-owning
// stream_descriptor (the client owns the fd and may replace it on every
// reconnect, so it is wrapped afresh on every turn and released, never
// closed, by asio), and zookeeper_process() runs on readiness. The client
// calls completions and watchers inside zookeeper_process(); they only copy
// what they got and post it onward to the loop, so nothing re-enters the
// client from its own callbacks.
//
// Requests are sent only while connected (the store waits for that).
// A server that stops answering (a GC pause, a stalled VM, a SIGSTOP) is
// noticed by the client only after two thirds of the session timeout, later
// than a leader's renewals can wait: with a silence limit, the link watches
// its requests itself, and one left unanswered that long makes it let go of
// the connection, so that the client takes the session (its id, its watches
// and its ephemeral nodes) to the next server of the list.
//
// Closing the link completes the requests in flight with ZCLOSING (posted,
// while the owner lives); state and node events stop at close(). Internal
// to the zookeeper store.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "baton/time.hpp"
#include "lease_nodes.hpp"

typedef struct _zhandle zhandle_t;

namespace baton::zookeeper_detail {

/// One op of a multi.
struct zk_op {
  enum class kind { create, set, remove, check };
  kind what = kind::check;
  std::string path;
  std::string data;
  std::int32_t version = -1;
  bool ephemeral = false;
};

/// A node's result in a multi (for a set: the node's stat after it).
struct zk_op_result {
  int rc = 0;
  node_seen stat;
};

struct zk_link_options {
  /// "ip:port,ip:port" with numeric addresses only (the client resolves
  /// names with a blocking call; the store resolves them first).
  std::string hosts;
  milliseconds session_timeout{0};
  /// Digest credentials "user:password" ("" = none); with them every node
  /// is created with creator-all plus world-read ACLs.
  std::string digest;
  /// The session's state changed (ZOO_CONNECTED_STATE, ...).
  std::function<void(int state)> on_state;
  /// A watched node changed (ZOO_CREATED_EVENT, ...; never session events).
  std::function<void(int type, std::string path)> on_node_event;
  /// How long a request may go unanswered (no answer to any request since
  /// it was sent, or since the last answer) before the server is taken for
  /// stalled and the session moves to the next server; 0 = never (the
  /// client's own limit, two thirds of the session timeout, stays). The
  /// requests in flight then complete with ZCONNECTIONLOSS. A connection
  /// attempt whose handshake goes unanswered that long is left for the next
  /// server too.
  milliseconds silence_limit{0};
  /// The session moved off `server` after `silent` without an answer
  /// (called before the state events of the move).
  std::function<void(std::string server, milliseconds silent)> on_move;
  /// The owner's life: completions, also those the client gives when the
  /// link is closed (ZCLOSING), are posted and run while it lives.
  std::weak_ptr<void> owner;
};

class zk_link : public std::enable_shared_from_this<zk_link> {
 public:
  /// nullptr and `error` set when the client refuses the host list.
  static std::shared_ptr<zk_link> open(boost::asio::io_context& io, zk_link_options options,
                                       std::string& error);
  ~zk_link();
  zk_link(const zk_link&) = delete;
  zk_link& operator=(const zk_link&) = delete;

  using node_handler = std::function<void(int rc, node_seen)>;
  using multi_handler = std::function<void(int rc, std::vector<zk_op_result>)>;
  using children_handler = std::function<void(int rc, std::vector<std::string> names)>;

  void get(const std::string& path, node_handler done);
  /// The same, arming a data watch (reported through on_node_event) when
  /// the node exists.
  void get_watch(const std::string& path, node_handler done);
  /// The names of a node's children (no watch).
  void children(const std::string& path, children_handler done);
  /// The same, arming a children watch (reported through on_node_event as
  /// ZOO_CHILD_EVENT) when the node exists.
  void children_watch(const std::string& path, children_handler done);
  /// Arms an exists watch (reported through on_node_event).
  void exists_watch(const std::string& path, node_handler done);
  /// A persistent or ephemeral node; the handler gets its stat (ctime).
  void create(const std::string& path, const std::string& data, bool ephemeral, node_handler done);
  void multi(std::vector<zk_op> ops, multi_handler done);

  /// ZOO_CONNECTED_STATE, ZOO_CONNECTING_STATE, ... (0 before the first turn).
  int state() const;
  bool connected() const;
  std::int64_t session_id() const;
  /// The session timeout the server granted (0 until connected).
  milliseconds negotiated_timeout() const;
  /// The server this session is connected to ("" when not connected).
  std::string connected_server() const;

  /// Lets go of the session without telling the server: the socket is shut
  /// down first, so that the close request never leaves. The client would
  /// otherwise wait (blocking the loop) for the server to confirm, up to the
  /// session timeout when it does not answer. The session, and a lease node
  /// with it, then expires on its timeout, as after a crash: a lease ends by
  /// its release or its timeout, never by a close.
  void close();

  /// Called by the C trampolines; not for the store.
  void post(std::function<void()> fn);
  /// A request's answer came (also ZCONNECTIONLOSS or ZCLOSING): called by
  /// the C trampolines; not for the store.
  void answered();
  const zk_link_options& options() const { return options_; }

 private:
  zk_link(boost::asio::io_context& io, zk_link_options options);
  void pump();
  void process(int events);
  void report_state();
  void arm(int fd, int interest, milliseconds wait);
  // The silence watch: a request went out; the timer; the move.
  void sent();
  void arm_silence();
  void move_off_silent_server();
  void watch_handshake();

  boost::asio::io_context& io_;
  zk_link_options options_;
  zhandle_t* zh_ = nullptr;
  boost::asio::posix::stream_descriptor descriptor_;
  boost::asio::steady_timer timer_;
  std::uint64_t generation_ = 0;
  bool pumping_ = false;
  int reported_state_ = 0;
  // The client's socket as the last turn named it (-1 = none).
  int fd_ = -1;
  std::shared_ptr<int> alive_ = std::make_shared<int>(0);
  std::shared_ptr<int> watch_alive_ = std::make_shared<int>(0);
  bool closed_ = false;
  // Requests sent and not answered yet, and since when the server has been
  // quiet: the first of them was sent, or the last answer came.
  std::size_t unanswered_ = 0;
  time_point quiet_since_{};
  boost::asio::steady_timer silence_timer_;
  // The connection attempt under way (its socket's local port; 0 = none, or
  // connected) and the limit on its handshake.
  int attempt_ = 0;
  boost::asio::steady_timer handshake_timer_;

 public:
  struct watch_context;

 private:
  std::unique_ptr<watch_context> watch_;
};

}  // namespace baton::zookeeper_detail
