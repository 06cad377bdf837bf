// The master of the election's slot in a Redis Cluster, found from the slot
// map: the seed nodes are asked in turn (`CLUSTER SHARDS`, or `CLUSTER SLOTS`
// before Redis 7), starting with the one that answered last. A MOVED is
// fresher than any map: the next locate answers its address without asking.
// There is no switch message to follow: a failed-over master's connection
// breaks, and a demoted one answers MOVED or READONLY, each of which makes
// the store reconnect and so locate again.
#pragma once

#include <boost/asio/io_context.hpp>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "connection.hpp"
#include "master_locator.hpp"

namespace baton::redis_detail {

struct cluster_locator_options {
  /// Some of the cluster's nodes, with the credentials and TLS settings the
  /// data connections use too.
  std::vector<redis_endpoint> seeds;
  std::string password_file;
  /// A key of the election (all its keys share one slot).
  std::string key;
  milliseconds connect_timeout{1000};
  milliseconds command_timeout{1000};
  /// Tests substitute the seeds' transport; empty = TCP/TLS.
  transport_factory transport;
};

class cluster_locator final : public master_locator,
                              public std::enable_shared_from_this<cluster_locator> {
 public:
  static std::shared_ptr<cluster_locator> create(boost::asio::io_context& io,
                                                 cluster_locator_options options);
  ~cluster_locator() override;

  void async_locate(locate_handler handler) override;
  void redirected(master_address where) override;
  void not_a_master() override;
  void close() override;
  std::string describe() const override;
  std::vector<store_member_status> sources() const override;

 private:
  struct seed;
  cluster_locator(boost::asio::io_context& io, cluster_locator_options options);

  void ask(std::size_t index, std::size_t asked, bool slots_command);
  void on_answer(std::size_t index, std::size_t asked, bool slots_command,
                 const command_result& r);
  void finish(store_error error, master_address where);

  boost::asio::io_context& io_;
  cluster_locator_options options_;
  std::uint16_t slot_;
  std::vector<std::unique_ptr<seed>> seeds_;
  std::vector<locate_handler> waiting_;
  std::vector<std::string> failures_;
  bool asking_ = false;
  std::size_t preferred_ = 0;
  std::optional<master_address> redirect_;
  bool closed_ = false;
};

}  // namespace baton::redis_detail
