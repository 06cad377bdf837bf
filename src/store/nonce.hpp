// Random values that tell one process's, or one store's, lease apart from
// another's with the same node id: a restarted daemon never renews, nor
// releases, its predecessor's term.
#pragma once

#include <cstddef>
#include <string>

namespace baton::store_detail {

/// `words` × 32 random bits from std::random_device, in lowercase hex
/// (8 digits a word).
std::string random_hex(std::size_t words);

/// 128 random bits in hex, new at each call: a nonce of one store's life.
std::string new_nonce();

/// 128 random bits in hex, drawn once per process: a store made again in the
/// same process (the same node id) still recognises the lease it holds.
const std::string& process_nonce();

}  // namespace baton::store_detail
