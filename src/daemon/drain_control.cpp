// Drain and never_lead (see drain_control.hpp).
#include "drain_control.hpp"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace baton {
namespace {

std::runtime_error file_error(const std::string& what, const std::string& path, int err) {
  return std::runtime_error("cannot " + what + " the drain file " + path + ": " +
                            std::strerror(err));
}

}  // namespace

std::string drain_file_of(const config& cfg) {
  if (!cfg.drain_file.empty()) return cfg.drain_file;
  if (cfg.socket.path.empty()) return {};
  return cfg.socket.path + ".drained";
}

bool drain_file_exists(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) return true;
  if (errno == ENOENT) return false;
  throw file_error("read", path, errno);
}

void write_drain_file(const std::string& path) {
  const std::string temporary = path + ".new";
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw file_error("write", path, errno);
  static constexpr char text[] =
      "drained: this node takes no lease until `baton undrain` (which removes this file)\n";
  const auto written = ::write(fd, text, sizeof text - 1);
  const int write_errno = errno;
  const bool synced = written == static_cast<ssize_t>(sizeof text - 1) && ::fsync(fd) == 0;
  const int sync_errno = errno;
  ::close(fd);
  if (!synced) {
    ::unlink(temporary.c_str());
    throw file_error("write", path, written < 0 ? write_errno : sync_errno);
  }
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(temporary.c_str());
    throw file_error("write", path, err);
  }
}

void remove_drain_file(const std::string& path) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) throw file_error("remove", path, errno);
}

drain_control::drain_control(const config& cfg, lease_store& store, succession& heirs,
                             std::function<void(event)> post)
    : cfg_(cfg), store_(store), heirs_(heirs), post_(std::move(post)) {}

candidate_standing drain_control::standing() const {
  if (cfg_.never_lead) return candidate_standing::never;
  return drained_ ? candidate_standing::drained : candidate_standing::eligible;
}

void drain_control::publish() {
  store_.update_card(encode_candidate_card({standing(), cfg_.advertise}));
  post_(events::standing{standing() == candidate_standing::eligible});
}

bool drain_control::load() {
  const auto path = drain_file_of(cfg_);
  if (!path.empty()) {
    try {
      drained_ = drain_file_exists(path);
    } catch (const std::runtime_error& e) {
      spdlog::critical("{}: whether this node is drained cannot be told", e.what());
      return false;
    }
  }
  if (drained_) {
    spdlog::info("drained ({} exists): this node takes no lease until `baton undrain`", path);
  } else if (cfg_.never_lead) {
    spdlog::info("never_lead: this node takes no lease; it watches and reports");
  }
  if (standing() != candidate_standing::eligible) publish();
  return true;
}

nlohmann::json drain_control::drain(bool leading, const peer_info& peer) {
  const auto path = drain_file_of(cfg_);
  if (path.empty()) throw std::runtime_error("no drain file: set drain_file or socket.path");
  std::optional<candidate_info> successor;
  if (leading) {
    try {
      successor = heirs_.drain_successor();
    } catch (const std::runtime_error& e) {
      spdlog::warn("drain refused: {}; this node keeps leading", e.what());
      throw std::runtime_error(std::string("refused: ") + e.what() +
                               "; this node keeps leading and is not drained");
    }
  }
  try {
    write_drain_file(path);
  } catch (const std::runtime_error& e) {
    spdlog::warn("drain refused: {}", e.what());
    throw std::runtime_error(std::string("refused: ") + e.what() + "; nothing changed");
  }
  const bool was = drained_;
  drained_ = true;
  if (!was) publish();
  if (successor) {
    heirs_.hand_over_for_drain(*successor, peer);
  } else if (!was) {
    spdlog::info("drained by pid {} (uid {}): this node takes no lease until `baton undrain`",
                 peer.pid, peer.uid);
  }
  nlohmann::json reply{
      {"node_id", cfg_.node_id},
      {"standing", to_string(standing())},
      {"drain_file", path},
      {"handing_over_to", successor ? nlohmann::json(successor->node) : nlohmann::json(nullptr)}};
  if (was) reply["already"] = true;
  return reply;
}

nlohmann::json drain_control::undrain(const peer_info& peer) {
  const auto path = drain_file_of(cfg_);
  if (path.empty()) throw std::runtime_error("no drain file: set drain_file or socket.path");
  try {
    remove_drain_file(path);
  } catch (const std::runtime_error& e) {
    spdlog::warn("undrain refused: {}", e.what());
    throw std::runtime_error(std::string("refused: ") + e.what() + "; still drained");
  }
  const bool was = drained_;
  drained_ = false;
  if (was) {
    spdlog::info("undrained by pid {} (uid {}): {}", peer.pid, peer.uid,
                 cfg_.never_lead ? "never_lead still keeps this node from leading"
                                 : "this node competes for the lease again");
    publish();
  }
  nlohmann::json reply{{"node_id", cfg_.node_id}, {"standing", to_string(standing())}};
  if (!was) reply["already"] = true;
  return reply;
}

}  // namespace baton
