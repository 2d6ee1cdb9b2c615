// The KV store of an emulation, in the server namespace: it accepts connections and answers every
// request read on one, in order. A request is 16 bytes, the chunk index and the number of bytes
// wanted (both little-endian u64); the answer is that many bytes. With only a context profile as
// input the bytes are filler of the profile's sizes (what crosses the network is their size, not
// their content; docs/EMULATION.md).
#pragma once
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "emulation/network_namespace.h"
#include "emulation/tcp.h"

namespace kvstream::emulation {

struct ChunkRequest {
  uint64_t chunk = 0;
  uint64_t bytes = 0;
};
inline constexpr size_t kChunkRequestBytes = 16;

class KvServer {
 public:
  // Listens on the server address of `ns` (an emulated network's server namespace).
  explicit KvServer(const NetworkNamespace& ns);
  ~KvServer();  // stops listening and waits for the connections to end (their clients close them)
  KvServer(const KvServer&) = delete;
  KvServer& operator=(const KvServer&) = delete;

  uint16_t port() const { return port_; }

 private:
  void accept_loop();

  const NetworkNamespace& ns_;
  TcpSocket listener_;
  uint16_t port_ = 0;
  std::thread acceptor_;
  std::mutex mutex_;
  std::vector<std::thread> connections_;
};

}  // namespace kvstream::emulation
