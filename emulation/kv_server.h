// The KV store of an emulation, in the server namespace: it accepts connections and answers every
// request read on one, in order. A request is 24 bytes, little-endian: the chunk index (u64), the
// choice (i64: a level index, or -1 for the chunk's text) and the number of bytes wanted (u64); the
// answer is that many bytes. With real payloads (emulate with a model) they are the chunk's
// bitstream at that level or its token ids, and a request whose size is not theirs closes the
// connection; with only a context profile as input they are filler of the profile's sizes (what
// crosses the network is their size, not their content; docs/EMULATION.md).
#pragma once
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "emulation/chunk_payloads.h"
#include "emulation/network_namespace.h"
#include "emulation/tcp.h"

namespace kvstream::emulation {

inline constexpr size_t kChunkRequestBytes = 24;

class KvServer {
 public:
  // Listens on the server address of `ns` (an emulated network's server namespace). `payloads`
  // (which must outlive the server): the real bytes; nullptr: filler.
  // Its connections send with `congestion_control`.
  KvServer(const NetworkNamespace& ns, const std::string& congestion_control, const ChunkPayloads* payloads = nullptr);
  ~KvServer();  // stops listening and waits for the connections to end (their clients close them)
  KvServer(const KvServer&) = delete;
  KvServer& operator=(const KvServer&) = delete;

  uint16_t port() const { return port_; }
  // Why a connection was refused (no thread could be started for it: the process's thread or
  // memory limit), or empty. Its client sees the connection close and fails the transfer;
  // emulate() adds this to that error.
  std::string failure() const;

 private:
  void accept_loop();

  const NetworkNamespace& ns_;
  const ChunkPayloads* payloads_;
  TcpSocket listener_;
  uint16_t port_ = 0;
  std::thread acceptor_;
  mutable std::mutex mutex_;
  std::vector<std::thread> connections_;
  std::string failure_;
};

}  // namespace kvstream::emulation
