// A scripted, in-memory stream_transport for testing the Redis connection and
// subscriber without a server. The test sees every command the client wrote
// (parsed back into argument vectors), feeds reply bytes, and decides how each
// attempt ends: connect refused, connect never answering, EOF, a read or write
// error, or plain silence. Every completion is posted on the io_context, never
// run inline, as with a real socket.
//
// fake_redis_factory is the transport_factory to put into
// connection_options::transport: it records every transport it made (with
// the time it made it, i.e. the connection attempt's start) and applies a
// setup hook to each, so a test can script attempts it has not seen yet.
#pragma once

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "baton/redis_url.hpp"
#include "redis/transport.hpp"

namespace baton::test {

/// RESP2 encoders for the replies a test feeds.
namespace resp {
std::string simple(const std::string& s);  ///< +s
std::string error(const std::string& s);   ///< -s
std::string integer(long long i);          ///< :i
std::string bulk(const std::string& s);    ///< $n s
std::string nil();                         ///< $-1
/// An array of already encoded elements.
std::string array(const std::vector<std::string>& encoded);
/// An array of bulk strings, as a command or a pub/sub push is.
std::string bulk_array(const std::vector<std::string>& strings);
}  // namespace resp

class fake_redis_transport : public redis_detail::stream_transport,
                             public std::enable_shared_from_this<fake_redis_transport> {
 public:
  using command = std::vector<std::string>;
  /// Called (posted, after the write's own completion) for every command the
  /// client writes; typically answers it with feed().
  using responder = std::function<void(fake_redis_transport&, const command&)>;

  fake_redis_transport(boost::asio::io_context& io, std::string peer, std::size_t index);

  // -- scripting (before or during the attempt) ------------------------------
  /// async_connect fails with `ec`; the detail is "connect <peer>: <message>",
  /// as the real transports word it.
  void fail_connect(std::error_code ec);
  /// async_connect never completes (until close()).
  void hang_connect();
  /// Every later async_write fails with `ec`.
  void fail_writes(std::error_code ec);
  void set_responder(responder r);
  /// At most `n` bytes per read completion (default: all that is buffered).
  void set_read_chunk(std::size_t n);

  // -- the server's side -----------------------------------------------------
  /// Bytes the client will read.
  void feed(const std::string& bytes);
  /// The peer closes: reads complete with asio::error::eof once the fed
  /// bytes are consumed.
  void close_with_eof();
  /// Reads complete with `ec` (e.g. connection_reset) once the fed bytes are
  /// consumed.
  void close_with_error(std::error_code ec);

  // -- what the client did ---------------------------------------------------
  /// Everything written, raw.
  const std::string& written() const { return written_; }
  /// Everything written, parsed as RESP commands.
  const std::vector<command>& commands() const { return commands_; }
  /// The commands' names (first arguments), e.g. {"AUTH", "SELECT", "GET"}.
  std::vector<std::string> command_names() const;
  bool connect_called() const { return connect_called_; }
  bool connected() const { return connected_; }
  /// The client closed this transport.
  bool closed() const { return closed_; }
  std::size_t index() const { return index_; }
  std::chrono::steady_clock::time_point created_at() const { return created_at_; }

  /// Drops every pending handler and the responder without running them (the
  /// factory's record does this when it goes, to break connection <->
  /// transport cycles of attempts still in flight).
  void abandon();

  // -- stream_transport ------------------------------------------------------
  void async_connect(connect_handler handler) override;
  void async_write(const char* data, std::size_t size, io_handler handler) override;
  void async_read_some(char* data, std::size_t size, io_handler handler) override;
  void close() override;
  const std::string& peer() const override { return peer_; }

 private:
  enum class connect_mode { succeed, fail, hang };

  void maybe_deliver();
  void parse_written();

  boost::asio::io_context& io_;
  std::string peer_;
  std::size_t index_;
  std::chrono::steady_clock::time_point created_at_;

  connect_mode connect_mode_ = connect_mode::succeed;
  std::error_code connect_error_;
  connect_handler pending_connect_;
  std::error_code write_error_;
  responder responder_;
  std::size_t read_chunk_ = 0;

  std::string inbox_;
  std::error_code end_;  // eof or error once the inbox is drained
  char* read_data_ = nullptr;
  std::size_t read_size_ = 0;
  io_handler pending_read_;
  bool delivery_posted_ = false;

  std::string written_;
  std::size_t parsed_ = 0;
  std::vector<command> commands_;
  bool connect_called_ = false;
  bool connected_ = false;
  bool closed_ = false;
};

/// A transport_factory that records what it made. Copies share the record.
class fake_redis_factory {
 public:
  /// Applied to each new transport before the connection uses it; `index` is
  /// its position in transports() (0 = first attempt).
  using setup = std::function<void(fake_redis_transport&, std::size_t index)>;

  fake_redis_factory();

  void on_create(setup s);
  /// For connection_options::transport.
  redis_detail::transport_factory factory() const;

  std::size_t count() const;
  /// The i-th transport made; throws std::out_of_range when there is none.
  fake_redis_transport& at(std::size_t i) const;
  fake_redis_transport& last() const;
  const std::vector<std::shared_ptr<fake_redis_transport>>& transports() const;
  /// The endpoints the factory was asked for, one per transport.
  const std::vector<redis_endpoint>& endpoints() const;

 private:
  struct state {
    ~state();
    setup on_create;
    std::vector<std::shared_ptr<fake_redis_transport>> transports;
    std::vector<redis_endpoint> endpoints;
  };
  std::shared_ptr<state> state_;
};

/// Runs `io` one handler at a time until `done()` holds or `limit` passes;
/// returns whether it holds. Restarts the context when it ran out of work.
bool run_until(boost::asio::io_context& io, const std::function<bool()>& done,
               std::chrono::milliseconds limit = std::chrono::milliseconds(3000));
/// Runs `io` for `d` (handlers and timers due in that time); returns early
/// once it has no work left, since nothing can happen after that.
void run_for(boost::asio::io_context& io, std::chrono::milliseconds d);

}  // namespace baton::test
