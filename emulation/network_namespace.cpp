#include "emulation/network_namespace.h"

#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <future>
#include <stdexcept>
#include <thread>

namespace kvstream::emulation {

namespace {

std::string errno_text() { return std::strerror(errno); }

void bring_up_loopback() {
  const int sock = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (sock < 0) throw std::runtime_error("socket: " + errno_text());
  ifreq ifr{};
  std::strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
  const bool ok = ::ioctl(sock, SIOCGIFFLAGS, &ifr) == 0 &&
                  (ifr.ifr_flags = short(ifr.ifr_flags | IFF_UP | IFF_RUNNING), ::ioctl(sock, SIOCSIFFLAGS, &ifr) == 0);
  const std::string error = ok ? "" : errno_text();
  ::close(sock);
  if (!ok) throw std::runtime_error("cannot bring up the loopback device: " + error);
}

}  // namespace

std::string emulation_unavailable_reason() {
  if (::geteuid() != 0) return "the emulator needs root (it makes network namespaces and TUN devices); run it as root";
  if (::access("/dev/net/tun", R_OK | W_OK) != 0) return "/dev/net/tun is not available: " + errno_text();
  try {
    NetworkNamespace::create();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

NetworkNamespace NetworkNamespace::create() {
  // unshare() moves the calling thread; a short-lived thread makes the namespace, keeps a descriptor
  // of it and ends, so no thread of the process stays inside.
  std::promise<int> made;
  std::thread maker([&made] {
    try {
      if (::unshare(CLONE_NEWNET) != 0)
        throw std::runtime_error("cannot create a network namespace (unshare(CLONE_NEWNET): " + errno_text() +
                                 "); the emulator needs root and namespace support");
      bring_up_loopback();
      const int fd = ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
      if (fd < 0) throw std::runtime_error("cannot open /proc/thread-self/ns/net: " + errno_text());
      made.set_value(fd);
    } catch (...) {
      made.set_exception(std::current_exception());
    }
  });
  maker.join();
  return NetworkNamespace(made.get_future().get());
}

NetworkNamespace::~NetworkNamespace() {
  if (fd_ >= 0) ::close(fd_);
}

ScopedNamespace::ScopedNamespace(const NetworkNamespace& ns) {
  previous_fd_ = ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  if (previous_fd_ < 0) throw std::runtime_error("cannot open /proc/thread-self/ns/net: " + errno_text());
  if (::setns(ns.fd(), CLONE_NEWNET) != 0) {
    const std::string error = errno_text();
    ::close(previous_fd_);
    throw std::runtime_error("cannot enter a network namespace (setns): " + error);
  }
}

ScopedNamespace::~ScopedNamespace() {
  ::setns(previous_fd_, CLONE_NEWNET);  // back where the thread was; cannot fail for a namespace it came from
  ::close(previous_fd_);
}

void write_net_sysctl(const NetworkNamespace& ns, const std::string& key, const std::string& value) {
  const std::string path = "/proc/sys/" + key;
  const pid_t child = ::fork();
  if (child < 0) throw std::runtime_error("fork: " + errno_text());
  if (child == 0) {  // only system calls from here: the parent may have other threads
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the emulator
    if (::setns(ns.fd(), CLONE_NEWNET) != 0) ::_exit(1);
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) ::_exit(2);
    const bool written = ::write(fd, value.data(), value.size()) == static_cast<ssize_t>(value.size());
    ::_exit(written ? 0 : 3);
  }
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {}
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error("cannot write " + value + " to " + path + " in an emulated namespace (step " +
                             std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + " failed)");
}

}  // namespace kvstream::emulation
