// The master of a Sentinel-managed group, found through its sentinels: each
// is asked in turn (`SENTINEL GET-MASTER-ADDR-BY-NAME`), starting with the
// one that answered last, and the first address wins; the connection then
// confirms with ROLE that the server is a master. Because switch messages get
// lost and hung sockets hide failovers, the locator also follows
// `+switch-master` on every sentinel it can reach and asks again every
// check_interval; either way a changed address is told to the switch listener, and the
// store reconnects.
#pragma once

#include <boost/asio/io_context.hpp>
#include <memory>
#include <string>
#include <vector>

#include "connection.hpp"
#include "master_locator.hpp"

namespace baton::redis_detail {

struct sentinel_locator_options {
  /// The sentinels, each with the credentials and TLS settings it needs.
  std::vector<redis_endpoint> sentinels;
  /// When set, the sentinels' password is read from this file on every
  /// connection attempt.
  std::string password_file;
  /// The group's name, as in `sentinel monitor NAME ...`.
  std::string master_name;
  milliseconds connect_timeout{1000};
  milliseconds command_timeout{1000};
  /// How often the address is asked again while the store is in use;
  /// 0 = only on reconnects and switch messages.
  milliseconds check_interval{1000};
  /// Tests substitute the sentinels' transport; empty = TCP/TLS.
  transport_factory transport;
};

class sentinel_locator final : public master_locator,
                               public std::enable_shared_from_this<sentinel_locator> {
 public:
  static std::shared_ptr<sentinel_locator> create(boost::asio::io_context& io,
                                                  sentinel_locator_options options);
  ~sentinel_locator() override;

  void async_locate(locate_handler handler) override;
  void not_a_master() override;
  void close() override;
  std::string describe() const override;
  std::vector<store_member_status> sources() const override;

 private:
  struct sentinel;
  sentinel_locator(boost::asio::io_context& io, sentinel_locator_options options);

  void start_watches();
  void ask(std::size_t index, std::size_t asked);
  void on_answer(std::size_t index, std::size_t asked, const command_result& r);
  void finish(store_error error, master_address where);
  void subscribe(std::size_t index);
  void on_switch_message(std::size_t index, const redis_reply& message);
  void retry_watch(std::size_t index, std::string why);
  void schedule_check();

  boost::asio::io_context& io_;
  sentinel_locator_options options_;
  std::vector<std::unique_ptr<sentinel>> sentinels_;
  std::vector<locate_handler> waiting_;
  bool asking_ = false;
  std::vector<std::string> failures_;  // this round's, one per sentinel asked
  std::size_t preferred_ = 0;           // asked first next time
  master_address last_;                 // the last address a sentinel gave
  master_address switched_to_;          // the last switch told to the listener
  bool watching_ = false;
  bool closed_ = false;
  boost::asio::steady_timer check_timer_;
};

}  // namespace baton::redis_detail
