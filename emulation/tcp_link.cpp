#include "emulation/tcp_link.h"

#include <sys/socket.h>

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <system_error>

#include "emulation/emulated_network.h"
#include "emulation/kv_server.h"
#include "emulation/tcp.h"

namespace kvstream::emulation {

TcpLink::TcpLink(sim::EventQueue& events, const NetworkNamespace& client, uint16_t server_port,
                 std::string congestion_control, ReceivedChunks* received, size_t request)
    : events_(events),
      client_(client),
      port_(server_port),
      congestion_control_(std::move(congestion_control)),
      received_(received),
      request_(request) {
  try {
    worker_ = std::thread([this] { work(); });
  } catch (const std::system_error& e) {
    throw std::runtime_error("cannot start a thread for request " + std::to_string(request) + "'s connection (" +
                             e.what() + "): the process's thread or memory limit (ulimit -u, ulimit -v) is too low " +
                             "for this many requests in flight");
  }
}

TcpLink::~TcpLink() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closing_ = true;
    if (connection_fd_ >= 0) ::shutdown(connection_fd_, SHUT_RDWR);
  }
  changed_.notify_one();
  worker_.join();
}

void TcpLink::send(double bits, size_t chunk, int choice, sim::EventQueue::Handler on_delivered) {
  events_.hold();  // run() waits for this transfer
  {
    std::lock_guard<std::mutex> lock(mutex_);
    jobs_.push_back({chunk, choice, uint64_t(std::max(1.0, std::round(bits / 8))), std::move(on_delivered)});
  }
  changed_.notify_one();
}

void TcpLink::work() {
  std::string error;
  TcpSocket connection;
  try {
    ScopedNamespace inside(client_);
    while (true) {
      Job job;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [&] { return closing_ || !jobs_.empty(); });
        if (jobs_.empty()) {
          connection_fd_ = -1;  // closes when `connection` goes
          return;
        }
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      if (!connection) {
        connection = connect_tcp(kServerAddress, port_, congestion_control_);
        std::lock_guard<std::mutex> lock(mutex_);
        connection_fd_ = connection.fd();
      }
      uint8_t header[kChunkRequestBytes];
      std::memcpy(header, &job.chunk, 8);
      std::memcpy(header + 8, &job.choice, 8);
      std::memcpy(header + 16, &job.bytes, 8);
      connection.write_all(header, sizeof header);
      std::vector<uint8_t> bytes(received_ ? job.bytes : 1);
      connection.read_exact(bytes.data(), 1);
      const double first_bit_s = events_.clock_s();
      if (received_) {
        connection.read_exact(bytes.data() + 1, job.bytes - 1);
        received_->put(request_, job.chunk, std::move(bytes));
      } else {
        connection.read_and_discard(job.bytes - 1);
      }
      events_.post([this, chunk = job.chunk, first_bit_s, done = std::move(job.on_delivered)] {
        events_.release();
        first_bit_chunk_ = chunk;
        first_bit_s_ = first_bit_s;
        done();
      });
    }
  } catch (const std::exception& e) {
    error = e.what();
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    connection_fd_ = -1;
    if (closing_) return;  // shut down on purpose
  }
  // The transfer cannot end: stop the emulation with the reason, on the loop thread.
  events_.post([error] { throw std::runtime_error("emulated transfer failed: " + error); });
}

}  // namespace kvstream::emulation
