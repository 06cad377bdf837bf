// A synchronous Redis client and the readers of Redis' text answers, for the
// test harnesses (redis_server, redis_sentinel, redis_cluster and the
// readiness wait in redis_child). It exists so that connecting with a
// timeout, AUTH, running one command and flattening its reply are written
// once for all of them, apart from the product's asynchronous client, which
// the tests must not lean on to inspect the servers that client talks to.
// Also the bounded poll the harnesses wait with, since Redis offers no event
// to wait on. Internal to tests/support: the public harness headers do not
// include it.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace baton::testing {

/// Connects to 127.0.0.1:`port` (connect and I/O bounded by `timeout`),
/// sends AUTH `password` unless it is empty, runs `args` and flattens the
/// reply: nil -> {}, a string/status/integer -> {text}, an array -> its
/// elements (nested arrays flattened, nil elements as ""). Throws
/// std::runtime_error "<label> <command>: ..." on an error reply or when the
/// server cannot be reached, e.g. "redis GET: cannot connect to port 6379:
/// Connection refused".
std::vector<std::string> sync_command(unsigned short port, const std::string& password,
                                      const std::vector<std::string>& args,
                                      std::chrono::milliseconds timeout,
                                      const std::string& label = "redis");

/// "key:value" from an INFO text (the key at the start of a line); "" when
/// absent.
std::string info_field(const std::string& info, const std::string& key);

/// Whether the comma-separated `flags` (as in CLUSTER NODES or SENTINEL
/// REPLICAS) contain `flag`.
bool has_flag(const std::string& flags, const std::string& flag);

/// "<count> ms".
std::string ms_text(std::chrono::milliseconds d);

/// Calls `check` (empty string = done, otherwise what is missing) every
/// 50 ms until it is done or `timeout` has passed; then throws
/// std::runtime_error "<what>: not done within <timeout> ms (<last answer>)\n"
/// followed by `context()` (log tails).
void poll_until(const std::string& what, std::chrono::milliseconds timeout,
                const std::function<std::string()>& check,
                const std::function<std::string()>& context);

}  // namespace baton::testing
