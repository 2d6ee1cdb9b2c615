#include "emulation/kv_server.h"

#include <sys/socket.h>

#include <algorithm>
#include <cstring>
#include <system_error>

#include "emulation/emulated_network.h"

namespace kvstream::emulation {

namespace {

void serve(TcpSocket connection, const ChunkPayloads* payloads) {
  static const std::vector<uint8_t> filler(1 << 20, 0x4b);
  uint8_t header[kChunkRequestBytes];
  try {
    while (true) {
      // A closed connection ends the loop; anything else unexpected too (the client reports it).
      ssize_t got = 0;
      while (got < ssize_t(sizeof header)) {
        const ssize_t n = ::recv(connection.fd(), header + got, sizeof header - size_t(got), 0);
        if (n <= 0) return;
        got += n;
      }
      uint64_t chunk = 0, bytes = 0;
      int64_t choice = 0;
      std::memcpy(&chunk, header, 8);
      std::memcpy(&choice, header + 8, 8);
      std::memcpy(&bytes, header + 16, 8);
      if (payloads) {
        const std::vector<uint8_t>* payload = payloads->find(chunk, choice);
        if (!payload || payload->size() != bytes) return;  // not what this server holds: the client sees the close
        connection.write_all(payload->data(), payload->size());
        continue;
      }
      while (bytes > 0) {
        const size_t piece = std::min<uint64_t>(bytes, filler.size());
        connection.write_all(filler.data(), piece);
        bytes -= piece;
      }
    }
  } catch (const std::exception&) {
    // The client went away mid-answer (an aborted emulation): nothing to answer any more.
  }
}

}  // namespace

KvServer::KvServer(const NetworkNamespace& ns, const std::string& congestion_control, const ChunkPayloads* payloads)
    : ns_(ns), payloads_(payloads) {
  run_in(ns_, [&] { listener_ = listen_tcp(kServerAddress, 0, &port_, congestion_control); });
  acceptor_ = std::thread([this] { accept_loop(); });
}

KvServer::~KvServer() {
  ::shutdown(listener_.fd(), SHUT_RDWR);  // wakes accept()
  acceptor_.join();
  for (auto& connection : connections_) connection.join();
}

void KvServer::accept_loop() {
  while (true) {
    TcpSocket connection;
    try {
      connection = accept_tcp(listener_);
    } catch (const std::exception&) {
      return;  // the listener was shut down
    }
    std::lock_guard<std::mutex> lock(mutex_);
    try {
      connections_.emplace_back(serve, std::move(connection), payloads_);
    } catch (const std::exception& e) {  // no thread (or no memory for one): the connection closes here; the acceptor stays up
      if (failure_.empty())
        failure_ = "the KV server could not start a thread for connection " + std::to_string(connections_.size() + 1) +
                   " (" + e.what() + "): the process's thread or memory limit (ulimit -u, ulimit -v) is too low " +
                   "for this many requests in flight";
    }
  }
}

std::string KvServer::failure() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return failure_;
}

}  // namespace kvstream::emulation
