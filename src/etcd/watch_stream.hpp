// One etcd watch: a POST /v3/watch with a complete body on a connection of
// its own, and its answer read as it streams (chunked, one JSON object a
// line). Each line goes to on_line; the end of the stream or any failure to
// on_closed, once; stop() ends it without calling on_closed.
//
// etcd 3.4 streams events only once the request body is complete, so a
// stream carries one watch; a new watch is a new stream.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ssl/context.hpp>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "baton/lease_store.hpp"
#include "endpoint.hpp"

namespace baton::etcd_detail {

class watch_stream : public std::enable_shared_from_this<watch_stream> {
 public:
  struct callbacks {
    std::function<void(std::string_view line)> on_line;
    std::function<void(store_error)> on_closed;
  };

  /// `tls` for an https endpoint (link.hpp).
  static std::shared_ptr<watch_stream> create(boost::asio::io_context& io, endpoint where,
                                              std::shared_ptr<boost::asio::ssl::context> tls,
                                              milliseconds connect_timeout, callbacks cb);
  ~watch_stream();
  /// Connects and sends `body` (a watch create request), with `token` in
  /// the Authorization header unless it is "".
  void start(std::string body, const std::string& token);
  void stop();

 private:
  struct impl;
  explicit watch_stream(std::unique_ptr<impl> d);
  void read_more();
  void lines();
  void closed(store_error e);

  std::unique_ptr<impl> impl_;
};

}  // namespace baton::etcd_detail
