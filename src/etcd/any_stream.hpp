// One stream type for Beast's HTTP operations over either transport (TCP for
// http, TLS over TCP for https). Called with each transport's own type, every
// http::async_read / async_write was compiled twice, which made the etcd
// component the longest compile of both trees (121 CPU-seconds under the
// sanitizers, 68 in the normal tree). Here the buffers and the completion
// handler are erased once per read or write, and the transport chosen at run
// time behind byte_channel.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/system/error_code.hpp>
#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

namespace baton::etcd_detail {

/// A move-only completion handler of a read or write, called once.
class erased_completion {
 public:
  template <typename Handler>
  explicit erased_completion(Handler handler)
      : call_(std::make_unique<model<Handler>>(std::move(handler))) {}

  void operator()(const boost::system::error_code& ec, std::size_t bytes) { (*call_)(ec, bytes); }

 private:
  struct callable {
    virtual ~callable() = default;
    virtual void operator()(const boost::system::error_code& ec, std::size_t bytes) = 0;
  };
  template <typename Handler>
  struct model final : callable {
    explicit model(Handler h) : handler(std::move(h)) {}
    void operator()(const boost::system::error_code& ec, std::size_t bytes) override {
      std::move(handler)(ec, bytes);
    }
    Handler handler;
  };
  std::unique_ptr<callable> call_;
};

/// What carries the bytes: the connection picks TCP or TLS per call.
class byte_channel {
 public:
  virtual boost::asio::any_io_executor channel_executor() = 0;
  virtual void read_some(boost::asio::mutable_buffer into, erased_completion done) = 0;
  virtual void write_some(std::vector<boost::asio::const_buffer> from, erased_completion done) = 0;

 protected:
  ~byte_channel() = default;
};

/// Beast's AsyncReadStream and AsyncWriteStream over a byte_channel.
class any_stream {
 public:
  using executor_type = boost::asio::any_io_executor;

  explicit any_stream(byte_channel& channel) : channel_(channel) {}

  executor_type get_executor() { return channel_.channel_executor(); }

  // A read fills the first non-empty buffer only, as a read_some may.
  template <typename MutableBuffers, typename Handler>
  void async_read_some(const MutableBuffers& buffers, Handler&& handler) {
    boost::asio::mutable_buffer into;
    for (auto it = boost::asio::buffer_sequence_begin(buffers);
         it != boost::asio::buffer_sequence_end(buffers); ++it) {
      into = boost::asio::mutable_buffer(*it);
      if (into.size() > 0) break;
    }
    channel_.read_some(into, erased_completion(std::forward<Handler>(handler)));
  }

  // A write keeps the whole sequence (header and body in one system call on
  // TCP).
  template <typename ConstBuffers, typename Handler>
  void async_write_some(const ConstBuffers& buffers, Handler&& handler) {
    std::vector<boost::asio::const_buffer> from;
    for (auto it = boost::asio::buffer_sequence_begin(buffers);
         it != boost::asio::buffer_sequence_end(buffers); ++it) {
      from.emplace_back(*it);
    }
    channel_.write_some(std::move(from), erased_completion(std::forward<Handler>(handler)));
  }

 private:
  byte_channel& channel_;
};

}  // namespace baton::etcd_detail
