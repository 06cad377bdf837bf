// Drain and never_lead: whether this node may take the lease, and what its
// registration says of it (candidate_card.hpp).
//
// `baton drain` (the socket's `drain`) writes the drain file, so that the
// drain outlives a restart of this daemon, and only then answers: a daemon
// that cannot write it refuses the drain and changes nothing. A drained
// leader hands over as a switchover does, to the best candidate a
// switchover would be accepted to (succession::drain_successor); when none
// can take over the drain is refused, as such a switchover is, and the node
// keeps leading. `baton undrain` removes the file. A node with never_lead
// never takes the lease, drained or not. The machine hears each change as
// events::standing; the store's registration carries it (update_card).
#pragma once

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "baton/app_socket.hpp"
#include "baton/candidate_card.hpp"
#include "baton/config.hpp"
#include "baton/election_machine.hpp"
#include "baton/lease_store.hpp"
#include "succession.hpp"

namespace baton {

/// Where the drain is remembered: drain_file, else socket.path with
/// ".drained" appended ("" = nowhere: no socket, so no drain either).
std::string drain_file_of(const config& cfg);

/// Whether the drain file `path` exists. Throws std::runtime_error naming
/// the file and the cause when that cannot be told (a directory on the way
/// that cannot be searched, say).
bool drain_file_exists(const std::string& path);
/// Writes the drain file (a line saying what it is), through a file beside
/// it renamed over it. Throws std::runtime_error naming the file and the
/// cause.
void write_drain_file(const std::string& path);
/// Removes it; one already gone is no error. Throws std::runtime_error
/// naming the file and the cause.
void remove_drain_file(const std::string& path);

class drain_control {
 public:
  /// `cfg` is read at each use; `post` hands an event to the driver.
  drain_control(const config& cfg, lease_store& store, succession& heirs,
                std::function<void(event)> post);

  /// At start, before the first attempt: reads the drain file, and tells
  /// the machine and the store when this node may not lead. False, after
  /// logging why, when the file cannot be read (a drain may be lost).
  bool load();
  bool drained() const { return drained_; }
  candidate_standing standing() const;

  /// The socket's `drain` and `undrain` from `peer`: the reply, or throws
  /// std::runtime_error with what to send back.
  nlohmann::json drain(bool leading, const peer_info& peer);
  nlohmann::json undrain(const peer_info& peer);

 private:
  void publish();

  const config& cfg_;
  lease_store& store_;
  succession& heirs_;
  std::function<void(event)> post_;
  bool drained_ = false;
};

}  // namespace baton
