// One request's TCP connection to the KV server, behind the simulator's Link interface, so that the
// simulator's streamer (sim/streamer.h), with the same policy objects, fetches chunks over a real
// network: send(bits, chunk, choice, on_delivered) asks the server for bits / 8 bytes of the chunk at
// that choice and posts on_delivered to the real-time event queue when the last byte has been read
// (and, with a ReceivedChunks, left there for the job that decodes or recomputes it). A worker thread in the
// client namespace connects on the first send (the handshake is part of the first chunk's time) and
// serves sends in order, one connection per request, as a real client would.
#pragma once
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

#include "emulation/chunk_payloads.h"
#include "emulation/network_namespace.h"
#include "sim/event_queue.h"
#include "sim/link.h"

namespace kvstream::emulation {

class TcpLink final : public sim::Link {
 public:
  // `received` (nullptr: the bytes are read and dropped) keeps what arrives under `request`.
  TcpLink(sim::EventQueue& events, const NetworkNamespace& client, uint16_t server_port, std::string congestion_control,
          ReceivedChunks* received = nullptr, size_t request = 0);
  ~TcpLink() override;  // closes the connection and joins the worker
  TcpLink(const TcpLink&) = delete;
  TcpLink& operator=(const TcpLink&) = delete;

  // Event-loop thread only. A transfer that fails (the server gone) ends the emulation with its error.
  void send(double bits, size_t chunk, int choice, sim::EventQueue::Handler on_delivered) override;
  double first_bit_s(size_t chunk) const override { return chunk == first_bit_chunk_ ? first_bit_s_ : -1; }

 private:
  struct Job {
    uint64_t chunk;
    int64_t choice;
    uint64_t bytes;
    sim::EventQueue::Handler on_delivered;
  };
  void work();

  sim::EventQueue& events_;
  const NetworkNamespace& client_;
  uint16_t port_;
  std::string congestion_control_;
  ReceivedChunks* received_;
  size_t request_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Job> jobs_;
  bool closing_ = false;
  int connection_fd_ = -1;  // guarded by mutex_; shut down on destruction, so a worker blocked in recv() ends
  // Loop thread: the first byte's arrival of the last chunk delivered.
  size_t first_bit_chunk_ = size_t(-1);
  double first_bit_s_ = -1;
  std::thread worker_;
};

}  // namespace kvstream::emulation
